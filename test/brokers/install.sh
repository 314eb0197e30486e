#!/usr/bin/env bash
# Installs what the broker tier needs from Debian when it is missing: LemonLDAP::NG's portal (run
# under plackup by the tier itself), Chromium and redis-server. Called by .ci/run and by the tier's
# Jest global setup; does nothing when everything is there.
#
# Debian's portal depends on its FastCGI server package, whose post-install script starts a system
# service (redis-server's does too): a policy-rc.d that refuses every service start is in place
# while apt runs, and removed after if this script put it there. No init script or system service
# is started or touched.
set -euo pipefail

llng_packages=(
  liblemonldap-ng-portal-perl   # the portal (and its common/handler libraries)
  liblemonldap-ng-manager-perl  # lemonldap-ng-cli and the manager's configuration tools
  libplack-perl                 # plackup
  libcrypt-openssl-bignum-perl  # reads RSA keys out of a JWKS
  liblwp-protocol-https-perl    # outbound https from the portal
  libgd-securityimage-perl      # the portal loads its captcha module at start, used or not,
  libimage-magick-perl          #   and that module draws with ImageMagick
)

llng_installed() {
  [ -f /usr/share/perl5/Lemonldap/NG/Portal/Main.pm ] \
    && [ -x /usr/share/lemonldap-ng/bin/lemonldap-ng-cli ] \
    && command -v plackup >/dev/null 2>&1 \
    && perl -MCrypt::OpenSSL::Bignum -MImage::Magick -MGD::SecurityImage -MLWP::Protocol::https -e1 >/dev/null 2>&1
}

need=()
llng_installed || need+=("${llng_packages[@]}")
[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || need+=(chromium)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "test/brokers/install.sh: missing ${need[*]}; installing them needs root" >&2
  exit 1
fi

policy=/usr/sbin/policy-rc.d
placed_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# placed by svc-connect test/brokers/install.sh: refuse service starts\nexit 101\n' > "$policy"
  chmod 0755 "$policy"
  placed_policy=1
fi
remove_policy() { if [ "$placed_policy" = 1 ]; then rm -f "$policy"; fi; }
trap remove_policy EXIT

echo "test/brokers/install.sh: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null

llng_installed || { echo "test/brokers/install.sh: LemonLDAP::NG still incomplete after apt-get" >&2; exit 1; }
