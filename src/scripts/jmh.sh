#!/usr/bin/env bash
# JMH benchmarks of the collector (src/jmh/java): the record path (one decode call's records through the decoder
# and every aggregator) and the tick (one interval's snapshot), in forks with infertop's own JVM options.
#
#   src/scripts/jmh.sh [JMH ARGUMENTS...]     e.g. src/scripts/jmh.sh -f 3 PipelineBench.tick
#
# Builds the classes (mvn -o test-compile), takes JMH from the pom's jmh profile (Maven Central, once), compiles
# the benchmarks with JMH's annotation processor into target/jmh-classes and runs org.openjdk.jmh.Main with the
# arguments given (-h: JMH's own help). Not part of the unit suite: compare two commits by running this in each,
# alternated, on a quiet machine.
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
root="$(readlink -f "$here/../..")"
source "$here/jdk25.sh"
export MAVEN_OPTS="${MAVEN_OPTS:---sun-misc-unsafe-memory-access=allow}"
cd "$root"
echo "jmh: building the classes (mvn -o test-compile)" >&2
mvn -o -q -Dfuzz.skip=true test-compile
cp_file="target/jmh-classpath.txt"
if ! mvn -o -q -Pjmh dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$cp_file" 2>/dev/null; then
  echo "jmh: fetching JMH from Maven Central (once)" >&2
  mvn -q -Pjmh dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$cp_file"
fi
classpath="target/classes:target/test-classes:$(cat "$cp_file")"
rm -rf target/jmh-classes
mkdir -p target/jmh-classes
mapfile -t sources < <(find src/jmh/java -name '*.java')
"$JAVA_HOME/bin/javac" -proc:full -cp "$classpath" -d target/jmh-classes "${sources[@]}"
exec "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "target/jmh-classes:$classpath" \
  org.openjdk.jmh.Main "$@"
