#!/bin/sh
# Fetch the two Lublin-Feitelson model logs of RLScheduler's table (docs/rlscheduler.md) from the public
# repository DIR-LAB/deep-batch-scheduler at its commit cd433e3 into scenarios/data/traces/rlscheduler/.
# They are not shipped with simsched: that repository states no licence. The checksums are those of the
# files docs/rlscheduler.md was measured on; a mismatch stops with exit 1 and removes the file.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
dest="$here/scenarios/data/traces/rlscheduler"
base="https://raw.githubusercontent.com/DIR-LAB/deep-batch-scheduler/cd433e3d62a01705f255bd48cb55b393862800e7/data"
mkdir -p "$dest"
fetch() {  # remote name, local name, sha256
    curl -fsSL -o "$dest/$2.part" "$base/$1"
    got=$(sha256sum "$dest/$2.part" | cut -d' ' -f1)
    if [ "$got" != "$3" ]; then
        rm -f "$dest/$2.part"
        echo "error: $1: sha256 $got, expected $3" >&2
        exit 1
    fi
    mv "$dest/$2.part" "$dest/$2"
    echo "$dest/$2"
}
fetch lublin_256.swf lublin_256.swf a394ab3d81179ebcf645a1cbd593a60b6dff7f11a510e1e6285c45f43310c962
fetch lublin_256_new2 lublin_256_new2.swf bee7e959a6b85844eafe7989d62c55ae43e096fd617cddf37423327967a1ed2d
