# Debian roots for the scripts that test in them (scripts/test-pipewire-1.4, scripts/test-package):
# mounts remembered and undone, and a private mount and PID namespace that ends whatever a run
# left behind. Sourced; needs root.

mounted=()
# Mounts (mount ARGS... TARGET), remembering TARGET for the cleanup.
mount_at() {
    local target=${*: -1}
    mkdir -p "$target"
    mount "$@"
    mounted+=("$target")
}

# Unmounts everything mounted by mount_at, last first.
unmount_all() {
    local k
    for ((k = ${#mounted[@]} - 1; k >= 0; k--)); do
        umount -R "${mounted[k]}" 2>/dev/null || umount -R -l "${mounted[k]}" 2>/dev/null || true
    done
    mounted=()
}

# The kernel file systems a chroot needs, on the root at $1.
mount_system() {
    mount_at -t proc proc "$1/proc"
    mount_at --rbind /dev "$1/dev"
    mount_at --rbind /sys "$1/sys"
    mount_at -t tmpfs -o mode=1777 tmpfs "$1/tmp"
}

# True if anything is mounted at or under folder $1 (a root must never be removed then).
mounts_under() { awk -v d="$1" '$5 == d || index($5, d "/") == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; }

# Makes a minimal Debian SUITE root at ROOT with debootstrap (into ROOT.new, moved in place when
# done), starting no services in it: make_root SUITE ROOT MIRROR LOG
make_root() {
    local suite=$1 root=$2 mirror=$3 log=$4 new=$2.new dir
    for dir in "$root" "$new"; do ! mounts_under "$dir" || die "something is mounted under $dir: not touching it"; done
    rm -rf "$new"
    mkdir -p "$(dirname "$root")"
    # A mirror that fails for a moment (CI has seen it) is tried again, three times in all.
    local attempt
    for attempt in 1 2 3; do
        rm -rf "$new"
        debootstrap --variant=minbase "$suite" "$new" "$mirror" >"$log" 2>&1 && break
        [ "$attempt" = 3 ] || { echo "debootstrap $suite failed (attempt $attempt of 3); trying again in 10 s" >&2; sleep 10; continue; }
        tail -n 30 "$log" >&2; [ -f "$new/debootstrap/debootstrap.log" ] && tail -n 30 "$new/debootstrap/debootstrap.log" >&2
        die "debootstrap failed (log: $log)"
    done
    apt_retries "$new"
    printf '#!/bin/sh\nexit 101\n' >"$new/usr/sbin/policy-rc.d"   # start no services in the root
    chmod 0755 "$new/usr/sbin/policy-rc.d"
    cp /etc/resolv.conf "$new/etc/resolv.conf" 2>/dev/null || true
}

# Makes apt in root $1 try each download again (a mirror failing for a moment fails no run).
apt_retries() {
    mkdir -p "$1/etc/apt/apt.conf.d"
    printf 'Acquire::Retries "5";\n' >"$1/etc/apt/apt.conf.d/80-crosspoint-retries"
}

# Runs COMMAND... up to three times, 10 s apart, until it succeeds: retry COMMAND...
retry() {
    local attempt
    for attempt in 1 2 3; do
        "$@" && return 0
        [ "$attempt" = 3 ] || { echo "failed (attempt $attempt of 3): $*; trying again in 10 s" >&2; sleep 10; }
    done
    return 1
}

# Folders removed when the namespace ends, once nothing is mounted under them.
remove_at_exit=()

# Stops whatever is still running in this PID namespace (we are its init), then unmounts.
cleanup_namespace() {
    local status=$? dir
    trap - EXIT INT TERM
    kill -TERM -1 2>/dev/null || true
    sleep 0.2
    kill -KILL -1 2>/dev/null || true
    wait 2>/dev/null || true
    unmount_all
    for dir in "${remove_at_exit[@]}"; do
        if mounts_under "$dir"; then echo "not removing $dir: something is still mounted under it" >&2; else rm -rf "$dir"; fi
    done
    exit "$status"
}

# In the namespace's init: the traps that end everything, and mounts of our own.
enter_namespace() {
    [ "$$" -eq 1 ] || die "internal: the inner part must run as the init of its own PID namespace"
    trap cleanup_namespace EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    mount --make-rprivate /
}

# Runs SCRIPT ARGS... again in a private mount and PID namespace (CROSSPOINT_IN_NAMESPACE=1 set)
# and waits for it; prints how long it took under NAME: in_namespace NAME SCRIPT ARGS...
in_namespace() {
    local name=$1 start=$SECONDS status=0 child
    shift
    # --mount-proc: a /proc of the new PID namespace (SwiftPM traps reading the host's
    # /proc/PID/stat for a PID of its own namespace).
    CROSSPOINT_IN_NAMESPACE=1 unshare --mount --pid --fork --mount-proc --kill-child=TERM -- "$@" <&0 &
    child=$!
    # A TERM or HUP for this script (a CI timeout) goes on to the run (the namespace's init,
    # unshare's child: unshare itself ignores TERM), which cleans up; a Ctrl-C reaches the run
    # itself (same process group). Either way, wait for it to end.
    trap 'kill -TERM $(pgrep -P "$child") 2>/dev/null' TERM HUP
    trap ':' INT
    wait "$child" || status=$?
    while kill -0 "$child" 2>/dev/null; do wait "$child" || status=$?; done
    echo "== $name: exit $status after $((SECONDS - start)) s" >&2
    return "$status"
}
