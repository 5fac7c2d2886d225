# Sourced by the load scripts (stress-threaded.sh, soak-ci.sh): start_hogs N starts N
# `yes > /dev/null` processes, killed when the sourcing script exits.
hog_pids=()
stop_hogs() { for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
start_hogs() {  # count
    trap stop_hogs EXIT
    local h
    for ((h = 0; h < $1; ++h)); do
        yes >/dev/null &
        hog_pids+=($!)
    done
}
