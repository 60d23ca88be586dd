"""The test harness: a real control plane, a real node and what they are filled with; used by
the e2e tests, `make demo` and the benchmarks (hack/bench)."""
