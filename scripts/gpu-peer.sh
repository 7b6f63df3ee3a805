#!/usr/bin/env bash
# The peer beside the GPU benchmark (run by `GPU_CHECK_MODE=peer scripts/gpu-check.sh`, after it has built bench-gpu
# and peer-gguf): llama.cpp built with CUDA from ../shared/peers/llama.cpp for the device's architecture only (kept in
# .cache/peers/llama-cuda, so a second call on a machine still warm skips the build), an OLMoE-1B-7B-shaped GGUF with
# random weights in the matched representation (Q4_0 experts + F16 rest, written by peer-gguf: the GPU machine has no
# Python for ../shared/peers/olmoe_to_gguf.py), then the two runtimes alternated: ours, the peer, ours again. The
# peer's prefill 512 and decode of 128 tokens after 128 of context at batch 1 come from llama-bench, its batched
# decode at 8 / 32 / 64 (128 new tokens after 128 of prompt each) from llama-batched-bench. Writes
# $OUT/gpu-check-peer.json: both sides' figures and the ratios (ours / the peer's, the better of our two runs).
# Usage: scripts/gpu-peer.sh BUILD_DIR SECONDS_LEFT
# Env: OUT, ARCHS (CMake CUDA architectures), PEER_BUILD (default .cache/peers/llama-cuda), PEER_CPU=1 (a dry run of
# the plumbing on a machine without a GPU: the CPU llama.cpp in .cache/peers/llama-cpu, the simulator's bench, the
# small model), PEER_PREPARE_ONLY=1 (build llama.cpp and write the GGUF, then stop: gpu-check.sh runs that in the
# background so that the comparison later in the same call finds both ready), PEER_JOBS (build jobs; default all
# cores), PEER_AFTER (a file to wait for before writing the GGUF: gpu-check.sh creates it once bench-gpu and peer-gguf
# are built, so that llama.cpp's build can start beside ours), PEER_OURS_FIRST (a bench-gpu JSON written just before:
# it stands for our first run, so that gpu-check.sh's own benchmark opens the alternation).
set -u
BUILD="$1"
DEADLINE=$(( $(date +%s) + $2 ))
left() { echo $(( DEADLINE - $(date +%s) )); }
LOG="${OUT:-${TMPDIR:-/tmp}}/gpu-peer.log"
mkdir -p "$(dirname "$LOG")"
say() { echo "gpu-peer: $*" | tee -a "$LOG"; }
# ../shared beside this checkout, or the copy scripts/gpu-carry.sh makes for a device machine (which never gets ../shared).
SRC=../shared/peers/llama.cpp
[ -d "$SRC" ] || SRC=.cache/peers/llama.cpp-src
CPU="${PEER_CPU:-0}"
PB="${PEER_BUILD:-$([ "$CPU" = 1 ] && echo .cache/peers/llama-cpu || echo .cache/peers/llama-cuda)}"
WORK="${OUT:-${TMPDIR:-/tmp}}"
SMALL=(); NGL=(-ngl 99); BENCH="$BUILD/bench-gpu"; SLOTS=16
if [ "$CPU" = 1 ]; then SMALL=(--small --layers 1); NGL=(-t 2); BENCH="$BUILD/sim-bench-gpu"; SLOTS=1; fi

# The dry run makes do with the CPU build's llama-bench (its cache holds no llama-batched-bench).
if [ ! -x "$PB/bin/llama-bench" ] || { [ "$CPU" != 1 ] && [ ! -x "$PB/bin/llama-batched-bench" ]; }; then
  if [ ! -d "$SRC" ]; then
    say "skipped: no llama.cpp source (../shared/peers/llama.cpp, or .cache/peers/llama.cpp-src carried: see scripts/gpu-carry.sh)"
    exit 2
  fi
  if [ "$(left)" -lt 240 ] && [ "${PEER_PREPARE_ONLY:-0}" != 1 ]; then
    say "skipped: $(left) s left, too few to build llama.cpp (a few minutes); call again"; exit 2
  fi
  FLAGS=(-DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TESTS=OFF
         -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF)
  [ "$CPU" = 1 ] || FLAGS+=(-DGGML_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=${ARCHS:-90-real}")
  T0=$(date +%s)
  RESERVE=$([ "${PEER_PREPARE_ONLY:-0}" = 1 ] && echo 5 || echo 120)  # seconds kept for the runs after the build
  if ! timeout -k 10 120 cmake -S "$SRC" -B "$PB" "${FLAGS[@]}" >>"$LOG" 2>&1 ||
     ! timeout -k 10 $(( $(left) - RESERVE > 30 ? $(left) - RESERVE : 30 )) cmake --build "$PB" -j"${PEER_JOBS:-$(nproc)}" \
         --target llama-bench llama-batched-bench >>"$LOG" 2>&1; then
    say "skipped: the llama.cpp build did not finish ($(( $(date +%s) - T0 )) s; the folder is kept: call again)"; exit 2
  fi
  say "llama.cpp built in $(( $(date +%s) - T0 )) s"
fi
# Beside the build, not under $OUT: 4.6 GB that should neither travel back nor be written again by the next call.
GGUF="$(dirname "$PB")/random-olmoe-q4_0$([ "$CPU" = 1 ] && echo -small).gguf"
# peer-gguf writes a temporary file and renames it, so a file here is whole.
if [ ! -f "$GGUF" ] && [ -n "${PEER_AFTER:-}" ]; then
  while [ ! -e "$PEER_AFTER" ] && [ "$(left)" -gt 0 ]; do sleep 2; done
  [ -e "$PEER_AFTER" ] || { say "skipped: $PEER_AFTER did not appear (our build) in the time given"; exit 2; }
fi
[ -f "$GGUF" ] || "$BUILD/peer-gguf" "$GGUF" "${SMALL[@]}" | tee -a "$LOG"
[ -f "$GGUF" ] || { say "skipped: peer-gguf failed"; exit 2; }
if [ "${PEER_PREPARE_ONLY:-0}" = 1 ]; then say "prepared: llama.cpp in $PB, the model in $GGUF"; exit 0; fi
export LD_LIBRARY_PATH="$PB/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

ours() {  # $1: the JSON to write; full residency alone, which is what the peer's figures stand beside
  timeout -k 10 $(( $(left) > 60 ? $(left) - 10 : 50 )) "$BENCH" --quick --full-only --no-kernel-table "${SMALL[@]}" \
    --partial-slots "$SLOTS" --json "$1" >>"$LOG" 2>&1
}
# Each of the peer's runs gets at most $1 seconds and never more than leaves our second run a minute.
cap() { local c=$(( $(left) - 60 )); [ "$c" -gt "$1" ] && c=$1; [ "$c" -lt 20 ] && c=20; echo "$c"; }
# A number from our bench's JSON: the first "KEY": value after "residency": "full".
our_figure() { sed -n '/"residency": "full"/,$p' "$1" | grep -o "\"$2\": [0-9.e+-]*" | head -1 | sed 's/.*: //'; }

OURS1="$WORK/ours-1.json"
if [ -n "${PEER_OURS_FIRST:-}" ] && [ -f "$PEER_OURS_FIRST" ]; then
  OURS1="$PEER_OURS_FIRST"
else
  ours "$OURS1" || say "our first benchmark run failed (see $LOG)"
fi
PP=$(timeout -k 10 "$(cap 90)" "$PB/bin/llama-bench" -m "$GGUF" "${NGL[@]}" -p 512 -n 0 -r 3 -o csv 2>>"$LOG" | tail -1 | awk -F'","' '{print $(NF-1)}')
TG=$(timeout -k 10 "$(cap 90)" "$PB/bin/llama-bench" -m "$GGUF" "${NGL[@]}" -p 0 -n 128 -d 128 -r 3 -o csv 2>>"$LOG" | tail -1 | awk -F'","' '{print $(NF-1)}')
BATCHED=""
if [ -x "$PB/bin/llama-batched-bench" ]; then
  BATCHED=$(timeout -k 10 "$(cap 150)" "$PB/bin/llama-batched-bench" -m "$GGUF" "${NGL[@]}" -c 17000 -npp 128 -ntg 128 -npl 8,32,64 \
    --output-format jsonl 2>>"$LOG")
else
  say "no llama-batched-bench in $PB: the batched figures are skipped"
fi
batched() { echo "$BATCHED" | grep "\"pl\": $1," | grep -o '"speed_tg": [0-9.]*' | sed 's/.*: //'; }
ours "$WORK/ours-2.json" || say "our second benchmark run failed (see $LOG)"

best() {  # the better of our two runs' figure $1
  local a b
  a=$(our_figure "$OURS1" "$1" 2>/dev/null); b=$(our_figure "$WORK/ours-2.json" "$1" 2>/dev/null)
  awk -v a="${a:-0}" -v b="${b:-0}" 'BEGIN { print (a > b ? a : b) }'
}
ratio() { awk -v o="$1" -v p="$2" 'BEGIN { if (p > 0 && o > 0) printf "%.3f", o / p; else print "null" }'; }
num() { [ -n "$1" ] && echo "$1" || echo null; }
O_PP=$(best prefill_tokens_per_s); O_B1=$(best b1); O_B8=$(best b8); O_B32=$(best b32); O_B64=$(best b64)
P_B8=$(batched 8); P_B32=$(batched 32); P_B64=$(batched 64)
JSON="$WORK/gpu-check-peer.json"
cat >"$JSON" <<EOF
{
  "peer": "llama.cpp $(cut -c1-12 "$SRC/.commit" 2>/dev/null || grep -o -m1 'commit `[0-9a-f]*' "$(dirname "$SRC")/README.md" 2>/dev/null | cut -c9-20) ($SRC), Q4_0 experts + F16 rest, random weights",
  "ours": {"prefill_512": $(num "$O_PP"), "decode_b1": $(num "$O_B1"), "decode_b8": $(num "$O_B8"), "decode_b32": $(num "$O_B32"), "decode_b64": $(num "$O_B64")},
  "peer_figures": {"prefill_512": $(num "$PP"), "decode_b1": $(num "$TG"), "decode_b8": $(num "$P_B8"), "decode_b32": $(num "$P_B32"), "decode_b64": $(num "$P_B64")},
  "ratios": {"prefill_512": $(ratio "$O_PP" "$PP"), "decode_b1": $(ratio "$O_B1" "$TG"), "decode_b8": $(ratio "$O_B8" "$P_B8"), "decode_b32": $(ratio "$O_B32" "$P_B32"), "decode_b64": $(ratio "$O_B64" "$P_B64")}
}
EOF
say "figures and ratios (ours / llama.cpp): $JSON"
tee -a "$LOG" <"$JSON"
