// libFuzzer entry point of the `webhook-decoder` target; the property it checks is
// `FuzzCheck.webhookDecoder` (Sources/BridgeTestSupport/Fuzz), shared with FuzzRegressionTests.

/// Runs one input; a finding traps with its description, which is how libFuzzer learns of it and
/// saves the input under `.build/fuzz/artifacts/webhook-decoder/`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebhookDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        try FuzzCheck.webhookDecoder(input)
    } catch {
        fatalError("webhook-decoder: \(error.description)")
    }
    return 0
}
