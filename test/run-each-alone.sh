#!/usr/bin/env bash
# Runs every test file alone — one Jest process per file — with its tests in a random order
# (jest --randomize; the seed is printed), to show that no file depends on another having run
# before it, nor on the order of its own tests. One line per file, then a summary with the command
# that replays each failure; exits non-zero when a file fails.
#
#   test/run-each-alone.sh                  the files of `npm test`
#   test/run-each-alone.sh unit browser reliability pack    (or: all)
#   SEED=1234 test/run-each-alone.sh        one seed for every file (default: a new one per file)
#
# It takes a while (each file pays Jest's start-up): run it after changing tests or helpers, not in
# every `.ci/run`.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
export NODE_OPTIONS='--experimental-vm-modules --disable-warning=ExperimentalWarning'

tiers=("$@")
[ ${#tiers[@]} -eq 0 ] && tiers=(unit)
[ "${tiers[0]}" = all ] && tiers=(unit browser reliability pack)

passed=0
failures=()
for tier in "${tiers[@]}"; do
  case "$tier" in
    unit) config=jest.config.js ;;
    browser) config=jest.browser.config.js ;;
    reliability) config=jest.reliability.config.js ;;
    pack) config=jest.pack.config.js ;;
    *) echo "unknown tier: $tier (unit, browser, reliability, pack or all)" >&2; exit 2 ;;
  esac
  mapfile -t files < <(jest --config "$config" --listTests | sed "s|^$PWD/||" | sort)
  for file in "${files[@]}"; do
    seed=${SEED:-$(( (RANDOM << 15) | RANDOM ))}
    started=$SECONDS
    if output=$(jest --config "$config" --runInBand --randomize --seed="$seed" --runTestsByPath "$file" 2>&1); then
      passed=$((passed + 1))
      echo "pass  $file (seed $seed, $((SECONDS - started)) s)"
    else
      failures+=("jest --config $config --runInBand --randomize --seed=$seed --runTestsByPath $file")
      echo "FAIL  $file (seed $seed, $((SECONDS - started)) s)"
      echo "$output" | grep -v '^\s*at ' | tail -60 | sed 's/^/      /'
    fi
  done
done

echo "${passed} files passed alone, ${#failures[@]} failed"
for replay in "${failures[@]}"; do echo "  replay: NODE_OPTIONS='${NODE_OPTIONS}' npx ${replay}"; done
[ ${#failures[@]} -eq 0 ]
