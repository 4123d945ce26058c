#!/bin/sh
# version.sh VERSION_FILE OUTPUT.h : writes qgpu/version.h from the one
# version number of the project (the file VERSION: MAJOR.MINOR.MICRO).
set -e
version=$(cat "$1")
case "$version" in
*[!0-9.]* | *..* | .* | *.) echo "version.sh: '$version' in $1 is not MAJOR.MINOR.MICRO" >&2; exit 1 ;;
esac
major=$(echo "$version" | cut -d. -f1)
minor=$(echo "$version" | cut -d. -f2)
micro=$(echo "$version" | cut -d. -f3)
[ -n "$major" ] && [ -n "$minor" ] && [ -n "$micro" ] ||
    { echo "version.sh: '$version' in $1 is not MAJOR.MINOR.MICRO" >&2; exit 1; }
tmp="$2.tmp"
cat > "$tmp" <<EOH
/* Generated from the file VERSION by build-aux/version.sh -- do not edit. */
#ifndef QGPU_VERSION_H
#define QGPU_VERSION_H

#define QGPU_VERSION_MAJOR $major
#define QGPU_VERSION_MINOR $minor
#define QGPU_VERSION_PATCH $micro
#define QGPU_VERSION "$version"

#endif /* QGPU_VERSION_H */
EOH
mv "$tmp" "$2"
