#!/usr/bin/env bash
# Lays out the files of the operator's container image (docs/image.md), for the Maven profile
# `image` (Jib, on `scratch`) and for the Dockerfile (on distroless):
#
#   OUT/runtime/opt/java   a jlink'd Java runtime with only the modules the jar uses, and a CDS
#                          archive dumped with the image's own JVM flags (so it is used at start-up)
#   OUT/app/               openfga-operator.jar (the shaded jar) and jvm.options (the JVM flags)
#
# With --with-libs, for an image on `scratch` (no libc of its own), also:
#   OUT/runtime/lib*/...   the C libraries the runtime links to, copied from the machine that builds
#                          (found with ldd: glibc only; the JDK bundles zlib), at the same paths
#   OUT/runtime/etc/       passwd and group naming the non-root user 65532
#
# usage: build-runtime.sh --jdk JDK_HOME --jar JAR --options-dir DIR --out DIR [--with-libs]
# The runtime is the JDK's own version (17 or newer; the image is meant to get 25): DIR/jvm.options
# always, and DIR/jvm-25.options too when that version is 25 or newer.
set -euo pipefail

die() { echo "build-runtime.sh: $*" >&2; exit 1; }

jdk= jar= options= out= with_libs=false
while [ $# -gt 0 ]; do
  case "$1" in
    --jdk) jdk=${2:?}; shift 2 ;;
    --jar) jar=${2:?}; shift 2 ;;
    --options-dir) options=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --with-libs) with_libs=true; shift ;;
    *) die "unknown argument $1 (usage: --jdk DIR --jar JAR --options-dir DIR --out DIR [--with-libs])" ;;
  esac
done
[ -n "$jdk" ] && [ -n "$jar" ] && [ -n "$options" ] && [ -n "$out" ] || die "--jdk, --jar, --options-dir and --out are required"
[ -x "$jdk/bin/jlink" ] || die "no jlink in $jdk: the image needs a full JDK (17 or newer, 25 preferred)"
[ -f "$jar" ] || die "no jar at $jar: run the package phase first"
[ -f "$options/jvm.options" ] || die "no jvm.options in $options"

feature=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$jdk/release")
[ -n "$feature" ] || die "cannot read JAVA_VERSION from $jdk/release"
# The image is meant to run Java 25: when the given JDK is older and a JDK 25 (with jlink) is
# installed beside it, use that one.
if [ "$feature" -lt 25 ]; then
  for candidate in "$(dirname "$jdk")"/*/; do
    candidate=${candidate%/}
    if [ -x "$candidate/bin/jlink" ] && grep -q '^JAVA_VERSION="25' "$candidate/release" 2>/dev/null; then
      echo "build-runtime: using the JDK 25 beside $jdk: $candidate" >&2
      jdk=$candidate
      feature=25
      break
    fi
  done
fi
[ "$feature" -ge 17 ] || die "the JDK in $jdk is $feature; the operator needs 17 or newer"

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/runtime" "$out/app"
runtime="$out/runtime"
java_home="$runtime/opt/java"
app="$out/app"
mkdir -p "$runtime/opt" "$app"

# The modules the jar needs, as jdeps sees them, plus what it cannot see: the EC algorithms for TLS
# to the API server (a module of its own before Java 22, still present and empty since).
modules=$("$jdk/bin/jdeps" --print-module-deps --ignore-missing-deps --multi-release "$feature" "$jar")
if "$jdk/bin/java" --list-modules | grep -q '^jdk\.crypto\.ec@'; then
  modules="$modules,jdk.crypto.ec"
fi
echo "build-runtime.sh: Java $feature runtime with $modules"

# java.desktop is there for java.beans (Jackson, SnakeYAML); its native AWT, font, image and sound
# libraries would pull in X11 and are never loaded by a headless server, so they are left out.
desktop_libs=""
for lib in 'libawt*' libfontmanager libfreetype libjavajpeg libjawt libjsound liblcms libmlib_image libsplashscreen; do
  desktop_libs="$desktop_libs,**/lib/$lib.so"
done
compress=zip-6
[ "$feature" -ge 21 ] || compress=2
"$jdk/bin/jlink" \
  --add-modules "$modules" \
  --strip-debug --no-man-pages --no-header-files \
  --compress="$compress" \
  --exclude-files="${desktop_libs#,}" \
  --output "$java_home"

cp "$jar" "$app/openfga-operator.jar"
cp "$options/jvm.options" "$app/jvm.options"
if [ "$feature" -ge 25 ] && [ -f "$options/jvm-25.options" ]; then
  cat "$options/jvm-25.options" >> "$app/jvm.options"
fi

# The default CDS archive of the runtime, dumped with the flags the image starts with: an archive
# made with other flags (e.g. without compact object headers) would be ignored at start-up.
if ! "$java_home/bin/java" @"$app/jvm.options" -Xshare:dump > "$out/cds-dump.log" 2>&1; then
  cat "$out/cds-dump.log" >&2
  die "dumping the CDS archive failed"
fi

if [ "$with_libs" = true ]; then
  # Every shared library outside the runtime that the launcher, the JVM or a JDK library links to,
  # and the dynamic loader itself, copied (symlinks resolved) to the path ldd found it at.
  # (ldd fails on files that are not ELF, such as scripts: their output is simply empty)
  ldd_out=$(find "$java_home/bin" "$java_home/lib" -type f \( -name '*.so' -o -perm -u+x \) -print0 \
    | xargs -0 ldd 2>/dev/null || true)
  libs=$(printf '%s\n' "$ldd_out" \
    | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }' \
    | awk -v home="$java_home/" 'index($0, home) != 1' | sort -u)
  [ -n "$libs" ] || die "ldd found no C library: is this a glibc-based Linux?"
  for lib in $libs; do
    mkdir -p "$runtime$(dirname "$lib")"
    cp -L "$lib" "$runtime$lib"
    echo "build-runtime.sh: copied $lib"
  done
  # glibc's licence travels with its binaries
  if [ -f /usr/share/doc/libc6/copyright ]; then
    mkdir -p "$runtime/usr/share/doc/libc6"
    cp /usr/share/doc/libc6/copyright "$runtime/usr/share/doc/libc6/copyright"
  fi
  mkdir -p "$runtime/etc"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$runtime/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' > "$runtime/etc/group"
fi

du -sh "$java_home" "$app" | sed 's/^/build-runtime.sh: /'
