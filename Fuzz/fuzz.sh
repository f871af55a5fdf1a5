#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets and runs each for FUZZ_SECONDS (default 60), seeded from
# the recorded fixtures and every input the fuzzers found before (Tests/BridgeCoreTests/Fixtures/fuzz).
#
# Built with swiftc rather than SwiftPM: `swift build --sanitize=fuzzer` would instrument every target,
# C-library ones included, and share (or fight over) the normal .build; here BridgeCore is compiled
# once as a static library with -sanitize=fuzzer,address, and each harness is linked against it
# together with the test-support files that do not need the C libraries.
#
# Settings: FUZZ_SECONDS, FUZZ_TARGETS (default: all four), FUZZ_OPT (-O, the default: on the decoder
# target it ran 176 executions per second to -Onone's 12), FUZZ_FLAGS (extra libFuzzer flags), SWIFTC.
# Output under .build/fuzz: bin/, corpus/<target> (kept between runs), artifacts/<target> (findings),
# logs/<target>.log. Exits 1 when any target found something.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
out=$root/.build/fuzz
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-webhook-decoder ingest merge-patch listener-routes}
opt=${FUZZ_OPT:--O}
swiftc=${SWIFTC:-swiftc}
fixtures=$root/Tests/BridgeCoreTests/Fixtures
# The test-support files a harness needs: the fuzz checks and what they drive (the in-memory PushWard,
# the contract validator, the harness). Every file of the library but those importing WebhookServer,
# which would bring in the C libraries.
support=()
while IFS= read -r file; do support+=("$file"); done < <(
    grep -rL --include='*.swift' '^import WebhookServer' Sources/BridgeTestSupport | sort)
sanitize=(-sanitize=fuzzer,address -g "$opt")

mkdir -p "$out/core" "$out/bin" "$out/logs"

# BridgeCore (webhook decoding is Foundation's JSONDecoder inside it), rebuilt only when a source
# file (or the optimisation level) changed.
core=$out/core/libBridgeCore.a
if [ ! -f "$core" ] || [ "$(cat "$out/core/opt" 2>/dev/null)" != "$opt" ] ||
    [ -n "$(find Sources/BridgeCore -name '*.swift' -newer "$core" | head -1)" ]; then
    echo "fuzz: building BridgeCore ($opt)"
    (cd "$out/core" && "$swiftc" "${sanitize[@]}" -parse-as-library -emit-library -static -emit-module -I . \
        -module-name BridgeCore -o libBridgeCore.a $(find "$root/Sources/BridgeCore" -name '*.swift' | sort))
    echo "$opt" > "$out/core/opt"
fi

for target in $targets; do
    files=("Fuzz/$target.swift" "${support[@]}")
    # The listeners' parsers need nothing but the core: built from the fuzz files alone.
    [ "$target" = listener-routes ] && files=("Fuzz/$target.swift" Sources/BridgeTestSupport/Fuzz/FuzzCheck.swift \
        Sources/BridgeTestSupport/Fuzz/FuzzFinding.swift Sources/BridgeTestSupport/Fuzz/FuzzCheck+ListenerRoutes.swift)
    binary=$out/bin/$target
    if [ ! -f "$binary" ] || [ -n "$(find "${files[@]}" "$core" -newer "$binary" | head -1)" ]; then
        echo "fuzz: building $target"
        "$swiftc" "${sanitize[@]}" -parse-as-library -I "$out/core" -module-name "Fuzz${target//-/}" \
            -use-ld=lld "${files[@]}" "$core" -o "$binary"
    fi
done

# Seeds: regenerated every run from the fixtures, in a directory libFuzzer only reads.
seed() { # seed TARGET NAME, the contents on stdin
    cat > "$out/seeds/$1/$2"
}
event_of() { basename "$1" | cut -d. -f1; }
rm -rf "$out/seeds"
for target in $targets; do
    mkdir -p "$out/seeds/$target" "$out/corpus/$target" "$out/artifacts/$target"
    [ -d "$fixtures/fuzz/$target" ] && cp "$fixtures/fuzz/$target"/* "$out/seeds/$target/" 2>/dev/null || true
done
for file in "$fixtures"/*.json; do
    event=$(event_of "$file")
    name=$(basename "$file" .json)
    case $event in
        workflow_run) index=0 ;; workflow_job) index=1 ;; ping) index=2 ;; *) index=3 ;;
    esac
    if [ -d "$out/seeds/webhook-decoder" ]; then
        # Mode 0 (JSON) and mode 1 (form-encoded): see FuzzCheck.webhookDecoder.
        { printf "\\x$(printf %02x $index)"; cat "$file"; } | seed webhook-decoder "$name.json"
        { printf "\\x$(printf %02x $((index | 4)))"; cat "$file"; } | seed webhook-decoder "$name.form"
    fi
    if [ -d "$out/seeds/ingest" ] && [ $index -le 1 ]; then
        { printf '%s\n' "$event"; cat "$file"; } | seed ingest "$name"
    fi
done
if [ -d "$out/seeds/ingest" ]; then
    # Whole runs: every delivery of one attempt, in order.
    for attempt in attempt10 attempt13; do
        for file in "$fixtures"/workflow_job.*"$attempt"*.json "$fixtures"/workflow_run.*"$attempt"*.json; do
            [ -f "$file" ] || continue
            printf '%s\n' "$(event_of "$file")"; cat "$file"; printf '\0'
        done | seed ingest "run-$attempt"
    done
    # The recorded runs (JSON Lines) when jq is there to unpack them; the fixtures alone also work.
    if command -v jq >/dev/null; then
        for file in "$fixtures"/golden/*.jsonl examples/*.jsonl; do
            jq -j '.event + "\n" + (.payload | tojson) + "\u0000"' "$file" | seed ingest "$(basename "$file" .jsonl)"
        done
    fi
fi
if [ -d "$out/seeds/merge-patch" ]; then
    # Two small objects sharing keys, and an object against an array (see FuzzCheck.jsonValue).
    printf '\x06\x03\x00\x04\x00\x81\x02\x06\x06\x02\x02\x01\x02\x81\x06\x00' | seed merge-patch objects
    printf '\x07\x02\x03\x06\x00\x00\x05\x03\x02\x07\x04\x01\x00' | seed merge-patch object-array
fi

if [ -d "$out/seeds/listener-routes" ]; then
    # A 10 KB query of many pairs, beside the hand-written cases kept in Fixtures/fuzz.
    { printf '/api/runs?'; for i in $(seq 1 1000); do printf 'k%d=%%zz&' $((i % 10)); done; } | seed listener-routes long-query
fi

status=0
summary=()
for target in $targets; do
    case $target in merge-patch) max_len=4096 ;; *) max_len=65536 ;; esac
    case $target in
        merge-patch) dict=() ;;
        listener-routes) dict=(-dict=Fuzz/listener.dict) ;;
        *) dict=(-dict=Fuzz/github.dict) ;;
    esac
    artifacts=$out/artifacts/$target
    before=$(ls "$artifacts" | wc -l)
    log=$out/logs/$target.log
    echo "fuzz: running $target for ${seconds}s (log: ${log#"$root/"})"
    started=$SECONDS
    set +e
    "$out/bin/$target" -max_total_time="$seconds" -max_len=$max_len -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" "${dict[@]}" ${FUZZ_FLAGS:-} "$out/corpus/$target" "$out/seeds/$target" \
        > "$log" 2>&1
    code=$?
    set -e
    elapsed=$((SECONDS - started))
    findings=$(($(ls "$artifacts" | wc -l) - before))
    if [ $code -ne 0 ] || [ $findings -gt 0 ]; then
        status=1
        grep -m1 -E 'Fatal error|ERROR: (AddressSanitizer|libFuzzer)|SUMMARY' "$log" || true
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    last=$(grep -E "^#[0-9]+" "$log" | tail -1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$last")
    corpus=$(ls "$out/corpus/$target" | wc -l)
    summary+=("fuzz $target: ${execs:-?} execs in ${elapsed}s (${rate:-?}/s), cov ${cov:-?}, corpus $corpus, findings $findings (exit $code)")
done
printf '%s\n' "${summary[@]}"
exit $status
