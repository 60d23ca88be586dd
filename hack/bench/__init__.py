"""`make bench`: kubectl terminating against kubectl, side by side, on a real loaded control plane.

    .venv/bin/python -m hack.bench         # defaults: sizes 2000,5000,20000; M=20; K=100
    BENCH_SIZES=500,1000 M=3 K=10 REPEAT=2 .venv/bin/python -m hack.bench   # a quick look
    BENCH_SIZES=100 M=1 K=1 REPEAT=1 .venv/bin/python -m hack.bench          # smallest (70 s)
    N=50000 .venv/bin/python -m hack.bench              # sizes 2000,5000,20000,50000

A fresh control plane (etcd, kube-apiserver, kube-controller-manager) in .bench/ is filled
through the API with concurrent creates: N pods in N/100 namespaces on N/50 nodes (with
Leases), each pod with realistic labels, annotations, an owning ReplicaSet, two containers
(env, ports, probes, resources) and a kubelet-style status write, so the server keeps two
managedFields entries per pod; a few dozen pods stuck for different reasons
(tests/harness/scenarios.py), M terminating namespaces held by a custom resource's finalizer and
a pod, and K extra CRD types with objects. The fill grows through the sizes; at each size
`pods -A` is timed next to the kubectl pipelines, and at the largest size every comparison
runs. Commands run as a plain user (bound to cluster-admin, not in system:masters), so API
Priority and Fairness applies to both tools as it would to a person.

Every command is started with subprocess.Popen and reaped with os.wait4: wall time from
spawn to exit, and ru_maxrss. For a shell pipeline ru_maxrss is the largest resident set of
any single process in it (the shell or one of its children), not their sum. Rounds
interleave the commands of a group (ours, theirs, ours, ...) so background load hits both.
Each command gets one untimed warm-up run (it also checks the answer), except the slow
recipes, whose time budget caps their runs (see BENCH_BUDGET).

Run from the repository root (the test harness in tests/harness makes the stuck objects). The
package: settings.py (these variables), objects.py (the realistic objects), filler.py
(concurrent creates), seed.py (stuck pods and terminating namespaces), launcher.py and
launch.py (timing commands), measure.py (commands, samples, checks), compare.py (the
comparisons), report.py (the table and report.md), run.py (the run).

Variables (environment or `make bench VAR=...`):
  BENCH_SIZES  pod counts to measure at, ascending (default 2000,5000,20000)
  N            largest size; default sizes below it are kept (N=50000: 2000,5000,20000,50000)
  M            terminating namespaces (default 20)
  K            extra CRD types (default 100)
  REPEAT       timed runs per command (default 5; the median is reported)
  BENCH_BIN    our executable (default .venv/bin/kubectl-terminating; e.g. the frozen dist/ one)
  BENCH_DIR    state directory (default .bench)
  BENCH_THREADS  concurrent creates while filling (default 16)
  BENCH_BUDGET   seconds a slow command may take in total before it stops repeating (default 90)
  BENCH_JSON_MAX largest size at which `kubectl get pods -A -o json | jq` runs (default 20000:
                 kubectl holds the whole list, about 0.25 GB of RSS per 1,000 pods)
  BENCH_SCENARIO=outage  the mass outage instead (make bench-outage): OUTAGE_SIZES stuck pods
                 on 1 dead node per 100 of them, among their healthy pods; `pods -A` and
                 `pods -A --summary` next to `kubectl get pods -A | grep Terminating`
  OUTAGE_SIZES   healthy:stuck pairs, growing (default 20000:2000,50000:20000)
  BENCH_SCENARIO=exporter  `serve`'s memory and CPU instead (make bench-exporter; see
                 hack/bench/exporter.py): EXPORTER_SIZES healthy:stuck (default 20000:2000),
                 EXPORTER_RUNS (default 5), EXPORTER_INTERVAL (default 10s)
  BENCH_SCENARIO=bignode  one virtual-kubelet node holding 90% of the pods, its Lease renewed
                 every 10 s, and 5 pods stuck on it (make bench-bignode): `pods -A` and `pods -A
                 --summary` next to `kubectl get pods -A | grep Terminating` at BIGNODE_SIZES
  BIGNODE_SIZES  pod counts, growing (default 5000,50000)
  BENCH_KEEP=1   leave the control plane running at the end (stop it with
                 `.venv/bin/python -m tests.harness.controlplane down --state-dir .bench/cluster`)
"""
