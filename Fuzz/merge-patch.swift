// libFuzzer entry point of the `merge-patch` target; the property it checks is
// `FuzzCheck.mergePatch` (Sources/BridgeTestSupport/Fuzz), shared with FuzzRegressionTests.

/// Runs one input; a finding traps with its description, which is how libFuzzer learns of it and
/// saves the input under `.build/fuzz/artifacts/merge-patch/`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMergePatch(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        try FuzzCheck.mergePatch(input)
    } catch {
        fatalError("merge-patch: \(error.description)")
    }
    return 0
}
