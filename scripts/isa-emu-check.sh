#!/usr/bin/env bash
# Runs the CPU backend's native tests on an emulated AVX-512 CPU (Bochs 2.7), for a host whose own CPU lacks
# AVX-512: QEMU 7.2's emulator and valgrind have none. The tests walk every ISA path the CPU offers against the
# scalar reference, so this is how their AVX-512 paths run on such a host. It says nothing about speed.
#
# Builds the tests statically (.cache/isa-emu/build), packs them with busybox into an initramfs, boots Debian's kernel
# from an ISO under Bochs with the serial console in a file, runs each test there and powers off. A test that fails,
# or a guest without AVX-512, fails the check. Boot takes about 4 minutes here, then each test some hundred times its
# native time. Bochs's Skylake-X model (AVX-512 F/CD/DQ/BW/VL, no VNNI) is the default: it runs the AVX-512 float
# kernels (attention, dense panels) beside the AVX2 integer ones, as such a CPU does. Its VNNI models did not boot
# Debian 12's kernel here: tigerlake ends in a page-fault loop early in the boot, corei7_icelake_u printed nothing in
# 7 minutes (also with RDPID cleared), so the AVX-512 VNNI integer kernels still need a real CPU.
#
# Needs Debian's packages bochs bochsbios vgabios busybox-static isolinux syslinux-common genisoimage cpio (installed
# when missing) and the linux-image-amd64 package's kernel, which `apt-get download` fetches into .cache/isa-emu once.
# Usage: scripts/isa-emu-check.sh [test-name ...]   (default: the tests of the kernels with AVX-512 paths)
# Env: ISA_EMU_TIMEOUT (seconds, default 3600), ISA_EMU_MODEL (a Bochs CPU model, default corei7_skylake_x).
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$PWD/.cache/isa-emu
mkdir -p "$WORK"
TESTS=("$@")
[ ${#TESTS[@]} -gt 0 ] || TESTS=(test-attention-f16 test-dense-panels test-cpu-kernels test-q4-q8-dot test-cpu-forward test-lm-head-screen)
MODEL=${ISA_EMU_MODEL:-corei7_skylake_x}
say() { echo "isa-emu-check: $*"; }

NEED=()
command -v bochs >/dev/null || NEED+=(bochs bochsbios vgabios)
{ [ -x /bin/busybox ] && file -L /bin/busybox | grep -q 'statically linked'; } || NEED+=(busybox-static)
[ -f /usr/lib/ISOLINUX/isolinux.bin ] || NEED+=(isolinux)
[ -f /usr/lib/syslinux/modules/bios/ldlinux.c32 ] || NEED+=(syslinux-common)
command -v genisoimage >/dev/null || NEED+=(genisoimage)
command -v cpio >/dev/null || NEED+=(cpio)
if [ ${#NEED[@]} -gt 0 ]; then
  say "installing ${NEED[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${NEED[@]}" >"$WORK/apt.log" 2>&1 ||
    { say "apt-get install ${NEED[*]} failed (see $WORK/apt.log)"; exit 2; }
fi

KERNEL=$(ls "$WORK"/kernel/boot/vmlinuz-* 2>/dev/null | head -1 || true)
if [ -z "$KERNEL" ]; then
  PKG=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
  [ -n "$PKG" ] || { say "no linux-image package known to apt (apt-get update?)"; exit 2; }
  say "fetching the kernel ($PKG)"
  (cd "$WORK" && apt-get download "$PKG" >/dev/null 2>&1) || { say "apt-get download $PKG failed"; exit 2; }
  dpkg-deb -x "$WORK/$PKG"_*.deb "$WORK/kernel"
  rm -f "$WORK/$PKG"_*.deb
  KERNEL=$(ls "$WORK"/kernel/boot/vmlinuz-* | head -1)
fi

say "building ${TESTS[*]} statically"
cmake -S native -B "$WORK/build" -DRT_CUDA=OFF -DRT_ADDON=OFF -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_EXE_LINKER_FLAGS=-static >"$WORK/cmake.log" 2>&1 || { say "cmake failed (see $WORK/cmake.log)"; exit 3; }
cmake --build "$WORK/build" --parallel "$(nproc)" --target "${TESTS[@]}" >"$WORK/build.log" 2>&1 ||
  { say "build failed (see $WORK/build.log)"; exit 3; }

INITRD=$WORK/initrd
rm -rf "$INITRD" "$WORK/iso"
mkdir -p "$INITRD"/{bin,proc,sys,dev,tmp,t} "$WORK/iso/isolinux"
cp /bin/busybox "$INITRD/bin/"
for a in sh mount poweroff grep tr tail cat; do ln -s busybox "$INITRD/bin/$a"; done
for t in "${TESTS[@]}"; do cp "$WORK/build/$t" "$INITRD/t/"; done
# The guest prints its CPU's vector flags, then each test's output (its last lines when it passed) and exit status.
cat >"$INITRD/init" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "GUEST FLAGS $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx|f16c|fma)' | tr '\n' ' ')"
for t in /t/*; do
  echo "GUEST RUN ${t#/t/}"
  "$t" >/tmp/out 2>&1
  rc=$?
  if [ "$rc" = 0 ]; then tail -n 2 /tmp/out; else cat /tmp/out; fi
  echo "GUEST RC ${t#/t/} $rc"
done
echo "GUEST DONE"
# The console's last lines are still in the UART's buffer: an immediate power-off would lose them.
sleep 3
poweroff -f
EOF
chmod +x "$INITRD/init"
(cd "$INITRD" && find . | cpio -o -H newc 2>/dev/null | gzip -1 >"$WORK/iso/initrd.gz")
cp "$KERNEL" "$WORK/iso/vmlinuz"
cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 "$WORK/iso/isolinux/"
# Bochs 2.7 gives no CPUID leaf for its models' PKRU state and the standard layout's size for XSAVES' compacted
# one: Linux would find the XSAVE sizes inconsistent and turn XSAVE off, and AVX with it. Without PKU, XSAVES and
# XSAVEC the kernel takes the standard layout, whose sizes agree. With KASLR the boot did not get past its start.
cat >"$WORK/iso/isolinux/isolinux.cfg" <<'EOF'
DEFAULT linux
PROMPT 0
TIMEOUT 0
LABEL linux
  KERNEL /vmlinuz
  APPEND initrd=/initrd.gz console=ttyS0,115200 quiet loglevel=3 clearcpuid=pku,ospke,xsaves,xsavec nokaslr mitigations=off
EOF
genisoimage -quiet -o "$WORK/boot.iso" -b isolinux/isolinux.bin -c isolinux/boot.cat -no-emul-boot \
  -boot-load-size 4 -boot-info-table -J -R "$WORK/iso"

# Debian's Bochs has no display-less GUI: the VNC one, not waiting for a client. It is built with its debugger,
# which starts stopped: the debugger's first command continues.
cat >"$WORK/bochsrc" <<EOF
megs: 1024
cpu: model=$MODEL, count=1, ips=100000000
romimage: file=/usr/share/bochs/BIOS-bochs-latest
vgaromimage: file=/usr/share/vgabios/vgabios.bin
ata0-master: type=cdrom, path=$WORK/boot.iso, status=inserted
boot: cdrom
com1: enabled=1, mode=file, dev=$WORK/serial.out
display_library: rfb, options="timeout=0"
log: $WORK/bochs.log
debug: action=ignore
info: action=ignore
error: action=ignore
clock: sync=none
mouse: enabled=0
speaker: enabled=0
sound: driver=dummy
EOF
echo c >"$WORK/debugger.rc"
rm -f "$WORK/serial.out"
say "booting Bochs ($MODEL); the guest's console: $WORK/serial.out"
START=$(date +%s)
timeout "${ISA_EMU_TIMEOUT:-3600}" bochs -q -f "$WORK/bochsrc" -rc "$WORK/debugger.rc" </dev/null >"$WORK/bochs.out" 2>&1 || true
say "the guest ran $(( $(date +%s) - START )) s"
SERIAL=$(tr -d '\r' <"$WORK/serial.out" 2>/dev/null || true)
sed -n '/^GUEST FLAGS/,$p' <<<"$SERIAL"

FLAGS=$(grep -m1 '^GUEST FLAGS' <<<"$SERIAL" || true)
case "$FLAGS" in
  *avx512f*) ;;
  *) say "the guest has no AVX-512: ${FLAGS:-no output}"; exit 4 ;;
esac
grep -q '^GUEST DONE' <<<"$SERIAL" || { say "the guest did not finish (ISA_EMU_TIMEOUT?)"; exit 5; }
FAILED=0
for t in "${TESTS[@]}"; do
  RC=$(grep "^GUEST RC $t " <<<"$SERIAL" | awk '{ print $4 }')
  if [ "$RC" = 0 ]; then say "$t: passed on the emulated CPU"; else say "$t: FAILED (exit ${RC:-none})"; FAILED=1; fi
done
exit "$FAILED"
