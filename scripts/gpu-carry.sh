#!/usr/bin/env bash
# Copies what scripts/gpu-check.sh reads from ../shared into ignored folders of this checkout, since a device machine
# gets the working tree and the paths named in `carry`, never the ../shared beside it: IFEval's prompts (the
# IFEval-shaped workload) and llama.cpp's source (the peer, GPU_CHECK_MODE=peer), without its git history or Python.
# Prints the `carry` list for the device call. Nothing here is committed (.cache/ is ignored).
# Usage: scripts/gpu-carry.sh
set -eu
cd "$(dirname "$0")/.."
SHARED=../shared
[ -d "$SHARED" ] || { echo "gpu-carry: $SHARED is not here" >&2; exit 2; }
mkdir -p .cache/ifeval .cache/peers
cp "$SHARED/ifeval/input_data.jsonl" .cache/ifeval/input_data.jsonl
SRC=.cache/peers/llama.cpp-src
rm -rf "$SRC.tmp"
mkdir -p "$SRC.tmp"
# tar keeps the tree's links and modes; the excluded parts are not needed to build llama-bench and llama-batched-bench.
tar -C "$SHARED/peers/llama.cpp" --exclude=./.git --exclude=./gguf-py --exclude=./conversion --exclude='./*.py' -cf - . |
  tar -C "$SRC.tmp" -xf -
chmod -R u+w "$SRC.tmp"  # ../shared is read-only, and so would the copy be, for a later run to replace
rm -rf "$SRC"
mv "$SRC.tmp" "$SRC"
# The pinned commit, which ../shared/peers/README.md names, travels inside the copy (gpu-peer.sh reports it).
grep -o -m1 'commit `[0-9a-f]*' "$SHARED/peers/README.md" | cut -c9- >"$SRC/.commit" || true
echo "gpu-carry: $(du -sh .cache/ifeval | cut -f1) of IFEval prompts, $(du -sh "$SRC" | cut -f1) of llama.cpp source" >&2
echo '[".cache/ifeval", ".cache/peers/llama.cpp-src"]'
