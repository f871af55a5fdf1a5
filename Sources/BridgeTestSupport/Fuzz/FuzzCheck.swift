/// The properties the fuzz targets check, one static function per target, each taking the raw
/// fuzzer input and throwing a `FuzzFinding` when a property fails.
///
/// They live here, in the test support library, rather than next to the harnesses because the
/// same function must judge an input in both places: `Fuzz/*.swift` wraps each in
/// `LLVMFuzzerTestOneInput` (compiled together with these files, see `Fuzz/fuzz.sh`), and
/// `FuzzRegressionTests` replays every input the fuzzers ever found through it. These files, and
/// what they drive (`BridgeHarness`, `InMemoryPushWard`, `ContractValidator`), import only
/// `BridgeCore`, so the fuzz build compiles them into each harness without the parts of this
/// library that need the C libraries.
public enum FuzzCheck {}
