"""Tools of the repository (hack/bench is a package: `python -m hack.bench`)."""
