import BridgeCore

print("pushward-bridge: the CLI arrives with the render command")
