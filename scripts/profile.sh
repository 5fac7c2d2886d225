#!/usr/bin/env bash
# Where one rowprobe run spends its CPU time, by stage: input (reading and decompressing the
# capture, the kernel's copies), parse, table (lookup, update, eviction), sweep (expiry),
# export (records to the output's format), output (the output's writes), memory (page faults
# and the kernel zeroing fresh pages), start-up/teardown (the main thread) and the rest
# (scheduling, waits). Samples every thread with `perf record -e cpu-clock` (works in VMs
# without hardware counters) and sorts each sample by thread and symbol.
#
# Usage: scripts/profile.sh [-b BINARY] [-F HZ] [-k] -- ROWPROBE-ARGUMENTS...
#   scripts/profile.sh -- -i 'pcap;file=trace.pcap' -s 'cache;size=20' -o 'ipfix;file=/dev/null' -Q
#   -b  the rowprobe binary (default build/release/core/rowprobe)
#   -F  sampling frequency (default 4000)
#   -k  keep perf.data (its path is printed) for `perf report -i ...`
# Needs perf (Debian: linux-perf) and permission to sample (root, or kernel.perf_event_paranoid
# <= 1). Prints one line per stage: CPU seconds and share of all samples.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/release/core/rowprobe
hz=4000
keep=0
while [[ $# -gt 0 ]]; do
    case $1 in
        -b) bin=$2; shift 2 ;;
        -F) hz=$2; shift 2 ;;
        -k) keep=1; shift ;;
        --) shift; break ;;
        *) echo "usage: $0 [-b BINARY] [-F HZ] [-k] -- ROWPROBE-ARGUMENTS..." >&2; exit 2 ;;
    esac
done
[[ $# -gt 0 ]] || { echo "$0: give rowprobe's arguments after --" >&2; exit 2; }
command -v perf >/dev/null || { echo "$0: perf not found (apt-get install linux-perf)" >&2; exit 1; }
data=$(mktemp /tmp/rowprobe-profile.XXXXXX)
report=$(mktemp)
trap 'rm -f "$report"; [[ $keep = 1 ]] || rm -f "$data"' EXIT
if ! perf record -q -e cpu-clock -F "$hz" -o "$data" -- "$bin" "$@" >/dev/null 2>"$report.err"; then
    cat "$report.err" >&2
    rm -f "$report.err"
    echo "$0: perf record failed (see above; kernel.perf_event_paranoid?)" >&2
    exit 1
fi
rm -f "$report.err"
perf report -i "$data" --no-children --sort comm,sym --stdio -F overhead,comm,sym 2>/dev/null \
    | grep -v '^#' | grep '%' > "$report"
wall=$(perf report -i "$data" --header-only 2>/dev/null | sed -n 's/.*sample duration : *\([0-9.]*\) ms.*/\1/p')
# cpu-clock counts nanoseconds: the event count is the CPU time sampled, over all threads.
cpuns=$(perf report -i "$data" --stdio --sort comm 2>/dev/null | sed -n 's/^# Event count (approx.): \([0-9]*\).*/\1/p' | head -1)
python3 - "$report" "${cpuns:-0}" "${wall:-0}" <<'PY'
import re, sys
path, cpuns, wall = sys.argv[1], float(sys.argv[2]), float(sys.argv[3] or 0)
rules = [
    ("other",   r"finish_task_switch|__schedule|schedule\b|sched_yield|futex|nanosleep|hrtimer|"
                r"entry_SYSCALL|syscall_exit|irqentry|cond_resched|pick_next|poll|clock_gettime|"
                r"sleep"),
    ("memory",  r"clear_page|page_fault|do_anonymous_page|handle_mm_fault|__handle_mm|do_huge_pmd|"
                r"clear_huge_page|folio_zero|alloc_pages|get_page_from_freelist|rmqueue|zap_|"
                r"unmap_page_range|free_pages|release_pages|__free_|tlb_|exc_page_fault"),
    ("input",   r"PcapStream|ByteSource|PcapInput|RawInput|GenInput|DpdkInput|pcap_|inflate|"
                r"crc32|adler32|copy_user|copy_to_user|_copy_to_iter|filemap_|shmem_file_read|"
                r"rep_movs|ksys_read|vfs_read|generic_file|touch_atime|readahead|page_cache|"
                r"distribut|FlowDistributor|pick"),
    ("parse",   r"parsePacket|[Pp]arse(?!.*Option)"),
    ("sweep",   r"[Ss]weep|[Ee]xpir|advanceTime|flushAll"),
    ("table",   r"FlowTable|processBatch|CachedFlow|Row<|lookup|XXH|xxh|[Hh]ash|Lru|Policy|"
                r"FragCache|Flood|CacheStorage|update"),
    ("output",  r"__libc_write|\bwrite\b|ksys_write|vfs_write|sendto|sendmsg|fwrite|_IO_|"
                r"OutputPlugin|::write|flush"),
    ("export",  r"Ipfix|IPFIX|Encoder|encode|Unirec|Json|Text|format|exportLoop|SpscRing|"
                r"FlowRecord"),
]
stages = {k: 0.0 for k, _ in rules}
stages["start-up/teardown"] = 0.0
total = 0.0
with open(path) as f:
    for line in f:
        m = re.match(r"\s*([0-9.]+)%\s+(\S+)\s+(.*)$", line)
        if not m:
            continue
        pct, comm, sym = float(m.group(1)), m.group(2), m.group(3)
        total += pct
        stage = None
        for name, rx in rules:
            if re.search(rx, sym):
                stage = name
                break
        if stage is None:
            if comm.startswith("rp-input"):
                stage = "input"
            elif comm.startswith("rp-export"):
                stage = "export"
            elif comm == "rowprobe":
                stage = "start-up/teardown"
            else:
                stage = "other"
        elif comm == "rowprobe" and stage in ("memory", "other"):
            stage = "start-up/teardown"
        stages[stage] += pct
cpu = cpuns / 1e9
print(f"CPU time sampled: {cpu:.3f} s over all threads; first to last sample: {wall/1000:.3f} s")
print(f"{'stage':<26} {'share':>7} {'CPU s':>8}")
labels = {"other": "other (scheduling, waits)"}
for name in ["input", "parse", "table", "sweep", "export", "output", "memory",
             "start-up/teardown", "other"]:
    share = stages[name]
    print(f"{labels.get(name, name):<26} {share:6.1f}% {cpu * share / 100:8.3f}")
PY
[[ $keep = 1 ]] && echo "perf data: $data (perf report -i $data --sort comm,sym)"
exit 0
