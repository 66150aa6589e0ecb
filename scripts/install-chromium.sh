#!/bin/sh
# Installs Debian's Chromium for the browser tests (Playwright drives it through
# executable_path; Playwright's own browser download does not work on this network).
set -eu
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian chromium for the browser tests ..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    exit 0
fi
echo "the browser tests need /usr/bin/chromium: run 'apt-get install chromium' as root" >&2
exit 1
