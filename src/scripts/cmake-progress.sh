# Sourced by the provisioning scripts: cmake_progress LOG, fed a cmake build's stdout, says each new "[ NN%]" line
# as it comes (through the caller's say) and keeps the rest of the output out of the way. (Not awk: Debian's mawk
# reads its input in blocks, so nothing would show until the build ends.)
cmake_progress() {
  local line last=""
  grep --line-buffered -o '^\[ *[0-9]*%\]' | while IFS= read -r line; do
    [ "$line" = "$last" ] || say "build $line"
    last="$line"
  done
}
