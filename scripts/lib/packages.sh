# Installs the Debian 12 packages Crosspoint needs, if any is missing. Sourced by scripts.
CROSSPOINT_PACKAGES=(
    pkg-config libpipewire-0.3-dev libspa-0.2-dev   # building the module and the command
    pipewire pipewire-bin wireplumber dbus           # the daemon, pw-cli, pw-cat, pw-dump
    sox python3                                      # making and measuring test audio
    tmux zsh fish                                    # typing into real shells (completions)
    libopenblas-dev                                  # the benchmark's reference
    chromium chromium-driver python3-selenium        # the real-browser tests (scripts/test-browser)
    fonts-liberation fonts-dejavu-core               # fonts for the browser (the screenshot's text)
)

# ensure_packages [PACKAGE...]: the given packages, or CROSSPOINT_PACKAGES when none are given.
ensure_packages() {
    local missing=() wanted=("$@")
    ((${#wanted[@]})) || wanted=("${CROSSPOINT_PACKAGES[@]}")
    for p in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing: ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

ensure_swift() {
    command -v swift >/dev/null 2>&1 && return 0
    [ -x /opt/swift/usr/bin/swift ] && export PATH="/opt/swift/usr/bin:$PATH" && return 0
    echo "Swift 6 is needed (swift.org/install); not found on PATH or in /opt/swift" >&2
    return 1
}

# The compiler for the scripts' small C programs: $CC, else cc, else the Swift toolchain's clang
# (the Debian 13 root of scripts/test-pipewire-1.4 has no gcc).
c_compiler() {
    if [ -n "${CC:-}" ]; then echo "$CC"; return 0; fi
    command -v cc && return 0
    ensure_swift && echo "$(dirname "$(command -v swift)")/clang"
}
