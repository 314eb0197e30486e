#!/usr/bin/env bash
# Installs LemonLDAP::NG's portal from Debian when it is missing, for the broker tier.
# The portal runs under plackup, started by the tier itself: the FastCGI server package that
# Debian's portal depends on would start a system service in its post-install script, so a
# policy-rc.d that refuses every service start is in place while apt runs (removed after, if
# this script put it there). No init script or system service is touched.
set -euo pipefail

packages=(
  liblemonldap-ng-portal-perl   # the portal (and its common/handler libraries)
  liblemonldap-ng-manager-perl  # lemonldap-ng-cli, to write the configuration
  libplack-perl                 # plackup
  libgd-securityimage-perl      # the portal loads its captcha module at start, used or not,
  libimage-magick-perl          #   and that module draws with ImageMagick
  libcrypt-openssl-bignum-perl  # reads RSA keys out of a JWKS
  liblwp-protocol-https-perl    # outbound https from the portal
)

installed() {
  [ -f /usr/share/perl5/Lemonldap/NG/Portal/Main.pm ] \
    && [ -x /usr/share/lemonldap-ng/bin/lemonldap-ng-cli ] \
    && command -v plackup >/dev/null 2>&1 \
    && perl -MCrypt::OpenSSL::Bignum -MImage::Magick -MGD::SecurityImage -MLWP::Protocol::https -e1 >/dev/null 2>&1
}

if installed; then exit 0; fi

if [ "$(id -u)" != 0 ]; then
  echo "install.sh: LemonLDAP::NG is missing and installing it needs root" >&2
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

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null

installed || { echo "install.sh: LemonLDAP::NG still incomplete after apt-get" >&2; exit 1; }
