#!/usr/bin/env bash
# Sourced by infertop's scripts: exports JAVA_HOME for a JDK 25 or newer (FFM is final from 22; infertop
# is compiled with --release 25). Looks at $JAVA_HOME, then /usr/lib/jvm/*, then `java` on PATH.
infertop_java_major() { # JAVA_HOME → major version, or nothing (bash only: every start of infertop runs this
  local rel="$1/release" line  # for each JDK installed, and a fork+exec costs more on a busy machine)
  [ -r "$rel" ] || return 0
  while IFS= read -r line; do
    if [[ "$line" =~ ^JAVA_VERSION=\"([0-9]+) ]]; then
      echo "${BASH_REMATCH[1]}"
      return 0
    fi
  done < "$rel"
}
infertop_find_jdk25() {
  local candidate major
  for candidate in "${JAVA_HOME:-}" /usr/lib/jvm/*; do
    [ -n "$candidate" ] && [ -x "$candidate/bin/java" ] || continue
    major="$(infertop_java_major "$candidate")"
    if [ -n "$major" ] && [ "$major" -ge 25 ]; then
      echo "$candidate"
      return 0
    fi
  done
  if command -v java >/dev/null 2>&1; then
    candidate="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
    major="$(infertop_java_major "$candidate")"
    if [ -n "$major" ] && [ "$major" -ge 25 ]; then
      echo "$candidate"
      return 0
    fi
  fi
  return 1
}
if ! JAVA_HOME="$(infertop_find_jdk25)"; then
  echo "infertop: no JDK 25 found (looked at \$JAVA_HOME, /usr/lib/jvm/*, java on PATH): install one (e.g. Temurin 25 or openjdk-25-jdk-headless) and set JAVA_HOME" >&2
  exit 1
fi
export JAVA_HOME
# A distribution's Maven (3.8, its bundled Guava) calls sun.misc.Unsafe, which a JDK 25 warns about in four lines on
# every build; the warning is Maven's, not the build's, so it is turned off for the Maven the scripts run.
case " ${MAVEN_OPTS:-} " in
  *" --sun-misc-unsafe-memory-access="*) ;;
  *) export MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow${MAVEN_OPTS:+ $MAVEN_OPTS}" ;;
esac
