// libFuzzer entry point of the `listener-routes` target; the property it checks is
// `FuzzCheck.listenerRoutes` (Sources/BridgeTestSupport/Fuzz), shared with FuzzRegressionTests.

/// Runs one input; a finding traps with its description, which is how libFuzzer learns of it and
/// saves the input under `.build/fuzz/artifacts/listener-routes/`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzListenerRoutes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        try FuzzCheck.listenerRoutes(input)
    } catch {
        fatalError("listener-routes: \(error.description)")
    }
    return 0
}
