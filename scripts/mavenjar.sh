# Sourced by scripts/nacos.sh and scripts/spring.sh: builds a Maven project
# of tools/ once into drainkit's cache and prints its jar's path.
#
# maven_jar NAME SRC JAR [MVNARG...] prints "$cache/NAME-HASH/JAR", where
# HASH is a hash of SRC's pom.xml and src/ (a change there builds a new
# entry). The build runs under an exclusive flock in a temporary directory
# renamed into place (atomic on one file system), so concurrent callers wait
# for one build. What the entry keeps: target/JAR and, if the build made
# one, target/lib. With MAVENJAR_CACHED=1 it never builds: it prints the
# path only if the jar is already there, else exits 3 without output
# (internal/toolbin then skips the tests outside `make test` and CI).
maven_jar() {
  local name="$1" src="$2" jarname="$3"
  shift 3
  local sum cache dir jar tmp
  sum="$(cd "$src" && find pom.xml src -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)"
  cache="${DRAINKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/drainkit}"
  dir="$cache/$name-$sum"
  jar="$dir/$jarname"
  if [ "${MAVENJAR_CACHED:-}" = 1 ]; then
    [ -f "$jar" ] || exit 3
    echo "$jar"
    return 0
  fi
  if [ ! -f "$jar" ]; then
    mkdir -p "$cache"
    exec 9>"$dir.lock"
    flock 9
    if [ ! -f "$jar" ]; then
      tmp="$(mktemp -d "$dir.tmp.XXXXXX")"
      trap 'rm -rf "$tmp"' EXIT
      echo "building $name into $dir (once)" >&2
      cp -r "$src/pom.xml" "$src/src" "$tmp/"
      (cd "$tmp" && mvn -q -B -DskipTests "$@" package) >&2
      mkdir "$tmp/out"
      mv "$tmp/target/$jarname" "$tmp/out/"
      if [ -d "$tmp/target/lib" ]; then mv "$tmp/target/lib" "$tmp/out/"; fi
      mv "$tmp/out" "$dir"
      rm -rf "$tmp"
      trap - EXIT
    fi
    exec 9>&-
  fi
  echo "$jar"
}
