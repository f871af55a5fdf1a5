/// Thrown inside a leader's turn when its epoch is no longer the leadership's: the transaction
/// rolls back and the instance steps down (`BridgeService.turn`).
struct LeadLost: Error {}
