import Foundation

/// The body GitHub sends for a hook whose content type is `application/x-www-form-urlencoded`.
public enum GitHubForm {
    /// `payload=<json>`: unreserved bytes as they are, space as `+`, every other byte `%XX`.
    public static func encoded(_ json: Data) -> Data {
        // Built as an array: appending to `Data` byte by byte was most of the fuzz target's time.
        var output = Array("payload=".utf8)
        output.reserveCapacity(output.count + json.count * 3)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in json {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "*"):
                output.append(byte)
            case UInt8(ascii: " "):
                output.append(UInt8(ascii: "+"))
            default:
                output.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            }
        }
        return Data(output)
    }
}
