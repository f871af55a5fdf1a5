// libFuzzer entry point of the `ingest` target; the property it checks is
// `FuzzCheck.ingest` (Sources/BridgeTestSupport/Fuzz), shared with FuzzRegressionTests.

/// Runs one input; a finding traps with its description, which is how libFuzzer learns of it and
/// saves the input under `.build/fuzz/artifacts/ingest/`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIngest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        try FuzzCheck.ingest(input)
    } catch {
        fatalError("ingest: \(error.description)")
    }
    return 0
}
