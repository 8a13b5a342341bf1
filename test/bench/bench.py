#!/usr/bin/env python3
"""bench.py: helpers for test/bench/run.sh (Python 3 standard library only).

Subcommands:

  memwatch start PID OUT   start a poller (in the background, detached) that
                           samples /proc/PID/status every 10 ms and returns
                           once it has taken its first sample
  memwatch stop OUT        stop it; prints "peak_anon_kb peak_hwm_kb
                           start_anon_kb samples"
  pgbench FILE PATTERN     read pgbench -r output: prints "tps latency_ms"
                           where latency_ms is the average latency of the
                           statement containing PATTERN (or of the whole
                           transaction when PATTERN is "-")
  report RESULTS           print the report from the key<TAB>value file

The memory figures:
  peak_anon_kb  highest RssAnon seen: the backend's private memory (heap,
                work memory, the in-memory graph); shared_buffers pages are
                RssShmem and are not counted
  peak_hwm_kb   VmHWM at the end: the kernel's exact peak resident set,
                which also counts every shared_buffers page the backend
                touched (so it grows with the heap and index it reads)
"""

import os
import subprocess
import sys
import time

POLL_INTERVAL = 0.01


# ---------------------------------------------------------------- memwatch

def read_status(pid):
    fields = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS", "RssAnon", "RssShmem"):
                    fields[key] = int(rest.split()[0])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return fields


def memwatch_poll(pid, out):
    """Runs detached: poll until OUT.stop exists or the process is gone."""
    stop = out + ".stop"
    peak_anon = 0
    hwm = 0
    start_anon = None
    samples = 0
    while True:
        st = read_status(pid)
        if st is None:
            break
        anon = st.get("RssAnon", 0)
        if start_anon is None:
            start_anon = anon
        peak_anon = max(peak_anon, anon)
        hwm = max(hwm, st.get("VmHWM", 0))
        samples += 1
        if samples == 1:
            with open(out + ".ready", "w") as f:
                f.write("ready\n")
        if os.path.exists(stop):
            break
        time.sleep(POLL_INTERVAL)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d %d %d %d\n" % (peak_anon, hwm, start_anon or 0, samples))
    os.rename(tmp, out)


def memwatch_start(pid, out):
    for suffix in ("", ".stop", ".ready", ".tmp"):
        try:
            os.unlink(out + suffix)
        except FileNotFoundError:
            pass
    if read_status(pid) is None:
        sys.exit("bench.py: no process %d to watch" % pid)
    with open(os.devnull, "r+b") as devnull:
        subprocess.Popen([sys.executable, os.path.abspath(__file__),
                          "memwatch", "poll", str(pid), out],
                         stdin=devnull, stdout=devnull, stderr=devnull,
                         start_new_session=True, close_fds=True)
    deadline = time.time() + 10
    while not os.path.exists(out + ".ready"):
        if time.time() > deadline:
            sys.exit("bench.py: memory poller did not start")
        time.sleep(0.005)


def memwatch_stop(out):
    with open(out + ".stop", "w") as f:
        f.write("stop\n")
    deadline = time.time() + 10
    while not os.path.exists(out):
        if time.time() > deadline:
            sys.exit("bench.py: memory poller did not stop")
        time.sleep(0.005)
    with open(out) as f:
        sys.stdout.write(f.read())


# ----------------------------------------------------------------- pgbench

def pgbench_stat(path, pattern):
    tps = None
    lat_total = None
    lat_stmt = None
    in_stmts = False
    with open(path) as f:
        for line in f:
            s = line.strip()
            if s.startswith("tps = "):
                tps = float(s.split()[2])
            elif s.startswith("latency average = "):
                lat_total = float(s.split()[3])
            elif s.startswith("statement latencies"):
                in_stmts = True
            elif in_stmts and pattern != "-" and pattern in s:
                lat_stmt = float(s.split()[0])
    if tps is None:
        sys.exit("bench.py: no tps line in %s" % path)
    if pattern == "-":
        lat = lat_total
    else:
        lat = lat_stmt
    if lat is None:
        sys.exit("bench.py: no latency for %r in %s" % (pattern, path))
    print("%.3f %.4f" % (tps, lat))


# ------------------------------------------------------------------ report

def load_results(path):
    res = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or "\t" not in line:
                continue
            k, v = line.split("\t", 1)
            res[k] = v
    return res


def num(res, key):
    v = res.get(key)
    if v is None or v == "":
        return None
    try:
        return float(v)
    except ValueError:
        return None


def fmt(v, digits):
    if v is None:
        return "-"
    return "%.*f" % (digits, v)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def report(path):
    r = load_results(path)
    pgv = r.get("pgvector") == "yes"
    efs = [int(x) for x in r.get("ef_list", "").split()]
    out = []
    w = out.append

    w("=" * 78)
    w("segvec benchmark: Fashion-MNIST, %s indexed vectors x %s dims, %s test "
      "queries, L2, k = 10" % (r.get("rows"), r.get("dim"), r.get("queries")))
    w("=" * 78)
    w("server   : %s" % r.get("server_version"))
    w("machine  : %s, %s CPUs; load average at start %s, at end %s"
      % (r.get("cpu"), r.get("ncpu"), r.get("load_start"), r.get("load_end")))
    try:
        busy = max(float(r["load_start"].split()[0]),
                   float(r["load_end"].split()[0])) / float(r["ncpu"])
    except (KeyError, ValueError, IndexError, ZeroDivisionError):
        busy = 0
    if busy >= 0.75:
        w("WARNING  : other work was running on this machine (1-minute load "
          "average up to %.1f per CPU):" % busy)
        w("           times and QPS are noisy; compare ratios, not "
          "absolute figures")
    w("settings : %s" % r.get("settings"))
    w("           every relation prewarmed into shared_buffers (pg_prewarm) "
      "before the searches:")
    w("           in-memory performance for both")
    w("segvec   : %s" % r.get("segvec_ddl"))
    if r.get("segvec_column"):
        w("           on column %s" % r.get("segvec_column"))
    if pgv:
        w("pgvector : %s  (pgvector %s)" % (r.get("pgvector_ddl"),
                                            r.get("pgvector_version")))
        w("           on an identical table whose column is vector(%s)"
          % r.get("dim"))
    else:
        w("pgvector : not available on this server: pgvector figures skipped")
    w("ground truth: exact top-10 by sequential scan (no vector index), %s"
      % r.get("gt_source"))
    w("")

    cols = ["segvec"] + (["pgvector", "segvec/pgvector"] if pgv else [])
    head = "%-42s" % "" + "".join("%16s" % c for c in cols)

    def row(label, key, digits, better=None):
        a = num(r, "segvec_" + key)
        cells = [fmt(a, digits)]
        if pgv:
            b = num(r, "pgvector_" + key)
            q = ratio(a, b)
            cells += [fmt(b, digits),
                      (fmt(q, 2) + "x" if q is not None else "-")]
        w("%-42s" % label + "".join("%16s" % c for c in cells))

    w("--- build (CREATE INDEX, one backend, no parallel workers)")
    w(head)
    row("build time (s)", "build_s", 1)
    row("index size (MB, pg_relation_size)", "index_mb", 1)
    row("table size with TOAST (MB) [5]", "table_mb", 1)
    row("peak private memory, RssAnon (MB)", "build_anon_mb", 1)
    row("peak resident set, VmHWM (MB) [1]", "build_hwm_mb", 1)
    w("plan of the prepared query (generic plan):")
    w("    segvec  : %s" % r.get("segvec_plan"))
    if pgv:
        w("    pgvector: %s" % r.get("pgvector_plan"))
    w("")

    w("--- search: recall@10 over all %s queries; single-client QPS of the "
      "prepared" % r.get("queries"))
    w("    SELECT id FROM t ORDER BY embedding <-> $1 LIMIT 10  "
      "(pgbench -M prepared -c 1, %s tx;" % r.get("qps_tx"))
    w("    best of %s run(s)%s) [2]"
      % (r.get("qps_runs"),
         ", the two indexes taking turns" if pgv else ""))
    w(head)
    for ef in efs:
        row("ef_search = %-4d recall@10" % ef, "recall_%d" % ef, 4)
        row("                 QPS", "qps_%d" % ef, 0)
        row("                 mean latency (ms)", "lat_%d" % ef, 3)
        row("                 index buffers per query", "bufs_%d" % ef, 0)
        row("                 backend CPU per query (us) [7]", "cpu_%d" % ef, 0)
    # best QPS at recall >= 0.95
    best = {}
    for m in ("segvec", "pgvector") if pgv else ("segvec",):
        cand = [(num(r, "%s_qps_%d" % (m, ef)), ef) for ef in efs
                if (num(r, "%s_recall_%d" % (m, ef)) or 0) >= 0.95]
        cand = [c for c in cand if c[0] is not None]
        best[m] = max(cand) if cand else None
    cells = []
    for m in ("segvec", "pgvector") if pgv else ("segvec",):
        b = best[m]
        cells.append("%.0f (ef %d)" % b if b else "none")
    line = "%-42s" % "best QPS at recall@10 >= 0.95" + "".join(
        "%16s" % c for c in cells)
    if pgv:
        q = ratio(best["segvec"][0] if best["segvec"] else None,
                  best["pgvector"][0] if best["pgvector"] else None)
        line += "%16s" % (fmt(q, 2) + "x" if q is not None else "-")
    w(line)
    w("")

    nw = r.get("writes")
    w("--- writes: %s single-row statements, one transaction each "
      "(pgbench -M prepared -c 1 -t %s) [3]" % (nw, nw))
    w(head)
    row("INSERT: total time (s)", "insert_s", 2)
    row("        rows/s", "insert_rps", 0)
    row("   same table without vector index (s)", "plain_insert_s", 2)
    row("   indexed / without index (time)", "insert_vs_plain", 2)
    row("UPDATE of non-vector column: total (s)", "update_s", 2)
    row("        rows/s", "update_rps", 0)
    row("   same table without vector index (s)", "plain_update_s", 2)
    row("   indexed / without index (time)", "update_vs_plain", 2)
    row("   HOT updates (% of the updates)", "update_hot_pct", 1)
    for k, label in (("after_insert", "INSERTs"), ("after_update", "UPDATEs")):
        v = num(r, "segvec_bg_" + k)
        if v is not None:
            w("segvec background jobs still running after the %s: waited "
              "%.1f s for them [6]" % (label, v))
    for k, label in (("build", "after CREATE INDEX"),
                     ("insert", "after the INSERTs"),
                     ("update", "after the UPDATEs"),
                     ("compact", "after ft.compact")):
        if r.get("segvec_state_" + k):
            w("segvec index %-18s: %s" % (label, r["segvec_state_" + k]))
    w("")

    w("--- after the writes (%s inserts + %s updates, no VACUUM), "
      "ef_search = 40, queries 1..%s [4]" % (nw, nw, r.get("after_queries")))
    w(head)
    row("QPS", "qps_after", 0)
    row("own copy found at rank 1 (fraction)", "after_self", 4)
    a = num(r, "segvec_compact_s")
    if a is not None:
        w("segvec ft.compact() after the writes: %.2f s (%s docs compacted); "
          "then QPS %s, own copy at rank 1: %s"
          % (a, r.get("segvec_compact_docs"),
             fmt(num(r, "segvec_qps_after_compact"), 0),
             fmt(num(r, "segvec_after_compact_self"), 4)))
    w("")

    if pgv:
        w("--- targets (segvec against pgvector, this run)")
        checks = []
        q = ratio(num(r, "segvec_build_s"), num(r, "pgvector_build_s"))
        checks.append(("build time at most 0.5x pgvector's",
                       q is not None and q <= 0.5, "%sx" % fmt(q, 2)))
        q = ratio(best["segvec"][0] if best["segvec"] else None,
                  best["pgvector"][0] if best["pgvector"] else None)
        checks.append(("QPS at recall@10 >= 0.95 at least 2x pgvector's",
                       q is not None and q >= 2, "%sx" % fmt(q, 2)))
        q = ratio(num(r, "segvec_insert_rps"), num(r, "pgvector_insert_rps"))
        checks.append(("INSERT throughput at least 5x pgvector's",
                       q is not None and q >= 5, "%sx" % fmt(q, 2)))
        q = num(r, "segvec_insert_vs_plain")
        checks.append(("INSERT time within 1.5x of the table without index",
                       q is not None and q <= 1.5, "%sx" % fmt(q, 2)))
        q = ratio(num(r, "segvec_index_mb"), num(r, "pgvector_index_mb"))
        checks.append(("index size no larger than pgvector's",
                       q is not None and q <= 1.0, "%sx" % fmt(q, 2)))
        for label, ok, val in checks:
            w("  %-9s %-52s %s" % ("[met]" if ok else "[NOT met]", label, val))
        w("")

    if r.get("stream_ef_list"):
        stream_report(r, pgv, efs, w)

    short = sorted(k for k in r if "_short_" in k)
    for k in short:
        m, _, ef = k.partition("_short_")
        w("WARNING: %s at ef_search = %s returned only %s rows for some "
          "query (LIMIT 10)" % (m, ef, r[k]))
    if short:
        w("")

    w("notes:")
    w("[1] VmHWM counts the shared_buffers pages the building backend touched "
      "(the heap, and for")
    w("    pgvector its TOAST table); RssAnon is the backend's own memory, "
      "sampled every 10 ms.")
    w("[2] each transaction first fetches the next query vector "
      "(SELECT embedding FROM testset WHERE")
    w("    qid = nextval(...)) and \\gset's it; the k-NN statement then gets "
      "it as its $1 parameter")
    w("    (text, parsed by the server). QPS = 1000 / the k-NN statement's "
      "mean latency as pgbench")
    w("    -r reports it (client round trip included, the fetch excluded); "
      "every query runs once")
    w("    per run.")
    w("    enable_seqscan = off during the sweep (the plans above show what "
      "the planner picks without it).")
    w("[3] inserts copy test-set rows (ids 100001..) from a source table, by "
      "primary key, in")
    w("    id order; updates set hits = hits + 1 on random ids (same seed "
      "for every table).")
    if "synchronous_commit=off" in r.get("settings", ""):
        w("    synchronous_commit = off: no transaction waits for its WAL "
          "flush.")
    else:
        w("    synchronous_commit = on: each transaction waits for its WAL "
          "flush.")
    w("[4] the %s inserted rows are the test images, so each query's own "
      "copy is now in the table" % nw)
    w("    at distance 0; \"own copy found\" checks that freshly inserted "
      "rows are returned.")
    w("[5] real[] is stored compressed in the heap row (about 1 kB of 3 kB), "
      "vector(784) out of")
    w("    line in TOAST (storage external): the heap rows differ in size, "
      "which changes how many")
    w("    updates can be HOT.")
    if r.get("segvec_background", "n/a") != "n/a":
        w("[6] segvec's background workers (ft.background_enabled() = %s) "
          "compact the mutable segment" % r.get("segvec_background"))
        w("    once it passes segvec.compact_threshold; part of that work may "
          "overlap the timed run")
        w("    itself, the rest is the wait shown, taken before the next run "
          "starts.")
    w("[7] the recall pass's backend CPU time (/proc/PID/schedstat) divided "
      "by its queries: it")
    w("    includes the ground-truth check, the same for every index; "
      "steadier than QPS when the")
    w("    machine is busy.  \"CPU-time QPS\" compares these figures.")
    w("total benchmark time: %s s" % r.get("total_s"))
    print("\n".join(out))


STREAM_MOMENTS = (
    ("st_now", "right after the inserts"),
    ("st_drain", "after ft.jobs is empty"),
    ("st_upd", "after the UPDATEs, before VACUUM"),
    ("st_vac", "after VACUUM"),
)


def best_qps(r, m, key_of, efs):
    """(QPS, ef) of the fastest ef_search with recall@10 >= 0.95, or None"""
    cand = []
    for ef in efs:
        q = num(r, "%s_qps_%s" % (m, key_of(ef)))
        rc = num(r, "%s_recall_%s" % (m, key_of(ef)))
        if q is not None and rc is not None and rc >= 0.95:
            cand.append((q, ef))
    return max(cand) if cand else None


def best_cpu(r, m, key_of, efs):
    """(CPU us per query, ef) of the cheapest ef_search with recall@10 >=
    0.95, or None"""
    cand = []
    for ef in efs:
        c = num(r, "%s_cpu_%s" % (m, key_of(ef)))
        rc = num(r, "%s_recall_%s" % (m, key_of(ef)))
        if c is not None and c > 0 and rc is not None and rc >= 0.95:
            cand.append((c, ef))
    return min(cand) if cand else None


def stream_report(r, pgv, efs, w):
    """The streaming scenario, both systems side by side."""
    sefs = [int(x) for x in r.get("stream_ef_list", "").split()]
    methods = ["segvec", "segvec_nb"] + (["pgvector"] if pgv else [])
    names = {"segvec": "segvec", "segvec_nb": "segvec, no bound",
             "pgvector": "pgvector"}
    w("--- streaming: index built on rows 1..%s, rows %s..%s "
      "inserted one per" % (r.get("stream_half"),
                            int(num(r, "stream_half") or 0) + 1, r.get("rows")))
    w("    transaction (synchronous_commit off), then %s single-row UPDATEs "
      "rewrite 10%% of the" % r.get("stream_updates"))
    w("    vectors; recall@10 / single-client QPS / index buffer accesses "
      "per query / backend")
    w("    CPU per query in microseconds [7]; \"fresh\" is the sweep above "
      "(one CREATE INDEX on")
    w("    all rows); \"no bound\" is segvec.shared_bound = off")
    for m in methods:
        a = num(r, "%s_stream_insert_rps" % m)
        if a is not None:
            w("    %-18s inserts %8.0f rows/s, updates %8s rows/s, VACUUM %s s"
              % (names[m], a, fmt(num(r, "%s_stream_update_rps" % m), 0),
                 fmt(num(r, "%s_stream_vacuum_s" % m), 1)))
    cw = 28
    head = "%-20s" % "" + "".join("%*s" % (cw, names[m]) for m in methods) + \
        "%*s" % (cw, "segvec fresh")
    for key, label in STREAM_MOMENTS:
        if num(r, "segvec_recall_%s_%d" % (key, sefs[0])) is None:
            continue
        w("")
        w("%s:" % label)
        if r.get("segvec_state0_" + key):
            w("    segvec index before the sweep: %s" % r["segvec_state0_" + key])
        if r.get("segvec_state_" + key):
            w("    segvec index after the sweep : %s; %s MB (pgvector %s MB)"
              % (r["segvec_state_" + key], r.get("segvec_size_" + key),
                 r.get("pgvector_size_" + key, "-")))
        w(head)
        for ef in sefs:
            cells = []
            for m in methods + ["fresh"]:
                mm, k = ("segvec", "%d" % ef) if m == "fresh" else \
                    (m, "%s_%d" % (key, ef))
                cells.append("%s / %s / %s / %s" % (
                    fmt(num(r, "%s_recall_%s" % (mm, k)), 3),
                    fmt(num(r, "%s_qps_%s" % (mm, k)), 0),
                    fmt(num(r, "%s_bufs_%s" % (mm, k)), 0),
                    fmt(num(r, "%s_cpu_%s" % (mm, k)), 0)))
            w("%-20s" % ("ef_search = %d" % ef) + "".join("%*s" % (cw, c)
                                                        for c in cells))
        fresh = best_qps(r, "segvec", lambda ef: "%d" % ef, sefs)
        bests = {m: best_qps(r, m, lambda ef: "%s_%d" % (key, ef), sefs)
                 for m in methods}
        w("%-20s" % "best QPS, rc >= .95" + "".join(
            "%*s" % (cw, "%.0f (ef %d)" % bests[m] if bests[m] else "none")
            for m in methods) + "%*s" % (cw, "%.0f (ef %d)" % fresh if fresh
                                         else "none"))
        # the same on CPU time: the least CPU per query at recall >= 0.95
        cfresh = best_cpu(r, "segvec", lambda ef: "%d" % ef, sefs)
        cbests = {m: best_cpu(r, m, lambda ef: "%s_%d" % (key, ef), sefs)
                  for m in methods}
        w("%-20s" % "least CPU, rc >= .95" + "".join(
            "%*s" % (cw, "%.0f us (ef %d)" % cbests[m] if cbests[m] else "none")
            for m in methods) + "%*s" % (cw, "%.0f us (ef %d)" % cfresh
                                         if cfresh else "none"))
        sb = bests["segvec"]
        checks = []
        q = ratio(sb[0] if sb else None, fresh[0] if fresh else None)
        checks.append(("QPS at recall >= 0.95 at least 0.8x fresh",
                       q is not None and q >= 0.8, "%sx" % fmt(q, 2)))
        if pgv:
            pb = bests["pgvector"]
            q = ratio(sb[0] if sb else None, pb[0] if pb else None)
            checks.append(("QPS at recall >= 0.95 at least pgvector's",
                           q is not None and q >= 1.0, "%sx" % fmt(q, 2)))
        if sb:
            q = ratio(num(r, "segvec_bufs_%s_%d" % (key, sb[1])),
                      num(r, "segvec_bufs_%d" % sb[1]))
            checks.append(("buffer accesses within 1.5x fresh (ef %d)" % sb[1],
                           q is not None and q <= 1.5, "%sx" % fmt(q, 2)))
        cb = cbests["segvec"]
        q = ratio(cfresh[0] if cfresh else None, cb[0] if cb else None)
        checks.append(("CPU-time QPS at recall >= 0.95 at least 0.8x fresh",
                       q is not None and q >= 0.8, "%sx" % fmt(q, 2)))
        if pgv:
            pc = cbests["pgvector"]
            q = ratio(pc[0] if pc else None, cb[0] if cb else None)
            checks.append(("CPU-time QPS at recall >= 0.95 at least pgvector's",
                           q is not None and q >= 1.0, "%sx" % fmt(q, 2)))
        for lab, ok, val in checks:
            w("  %-9s %-52s %s" % ("[met]" if ok else "[NOT met]", lab, val))
    w("")


def main(argv):
    if len(argv) >= 3 and argv[1] == "memwatch":
        if argv[2] == "start" and len(argv) == 5:
            return memwatch_start(int(argv[3]), argv[4])
        if argv[2] == "poll" and len(argv) == 5:
            return memwatch_poll(int(argv[3]), argv[4])
        if argv[2] == "stop" and len(argv) == 4:
            return memwatch_stop(argv[3])
    elif len(argv) == 4 and argv[1] == "pgbench":
        return pgbench_stat(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "report":
        return report(argv[2])
    sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
