# dist, krew-manifest, krew-install, smoke, bench-startup
