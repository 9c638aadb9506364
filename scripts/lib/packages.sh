# The Debian 12 packages each script needs. Each script installs its own groups and nothing
# more: building never pulls in a daemon or a browser, the demo never a browser.
# Building the module and the command (scripts/build, scripts/install, scripts/package):
CROSSPOINT_BUILD_PACKAGES=(
    pkg-config libpipewire-0.3-dev libspa-0.2-dev   # the module and the command, against libpipewire
)
# Running a private daemon and measuring audio (scripts/demo; scripts/sandbox's pw_query needs python3):
CROSSPOINT_DEMO_PACKAGES=(
    pipewire pipewire-bin wireplumber dbus           # the daemon, pw-cli, pw-cat, pw-dump
    sox python3                                      # making and measuring test audio
)
# The rest of the tests (scripts/test):
CROSSPOINT_TEST_PACKAGES=(
    tmux zsh fish                                    # typing into real shells (completions)
    libopenblas-dev                                  # the benchmark's reference
    chromium chromium-driver python3-selenium        # the real-browser tests (scripts/test-browser)
    fonts-liberation fonts-dejavu-core               # fonts for the browser (the screenshot's text)
    liblo-tools                                      # a real OSC client (oscsend, oscdump): serve --osc
    pipewire-pulse pulseaudio-utils                  # what applications see: pactl, paplay, parecord
    curl iproute2                                    # serve's attackers: HTTP, network namespaces, veth
    nftables                                         # packets lost between the network tests' machines
)
# The benchmark (scripts/bench): its reference, OpenBLAS, found through pkg-config.
CROSSPOINT_BENCH_PACKAGES=(libopenblas-dev pkg-config)
# Making the Debian package (scripts/package): dpkg-shlibdeps.
CROSSPOINT_PACKAGING_PACKAGES=(dpkg-dev)
# Everything the tests use.
CROSSPOINT_PACKAGES=(
    "${CROSSPOINT_BUILD_PACKAGES[@]}" "${CROSSPOINT_DEMO_PACKAGES[@]}" "${CROSSPOINT_TEST_PACKAGES[@]}"
)

# ensure_packages [PACKAGE...]: installs those of the given packages (CROSSPOINT_PACKAGES when
# none are given) that are missing.
# CROSSPOINT_PACKAGES_DRY_RUN=1: prints "would install: ..." instead and ends the script there
# (scripts/test-package checks on a fresh Debian 12 what each script would bring in).
ensure_packages() {
    local missing=() wanted=("$@")
    ((${#wanted[@]})) || wanted=("${CROSSPOINT_PACKAGES[@]}")
    for p in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ "${CROSSPOINT_PACKAGES_DRY_RUN:-}" = 1 ]; then
        echo "would install: ${missing[*]}"
        exit 0
    fi
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
