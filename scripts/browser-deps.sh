#!/usr/bin/env bash
# The browser tier's Chromium: Debian's package (/usr/bin/chromium), which Playwright drives
# through executable_path. Installed only when this runs as root and it is missing; otherwise
# the tier skips its tests and says why.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "browser-deps: /usr/bin/chromium is missing and this is not root with apt-get;" \
        "the browser tier will be skipped" >&2
    exit 0
fi
echo "browser-deps: installing Debian's chromium with apt-get" >&2
apt-get install -y --no-install-recommends chromium >&2 \
    || { apt-get update >&2 && apt-get install -y --no-install-recommends chromium >&2; } \
    || echo "browser-deps: apt-get could not install chromium; the browser tier will be skipped" >&2
