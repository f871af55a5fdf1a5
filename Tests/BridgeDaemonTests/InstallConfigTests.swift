import BridgeTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `make install` leaves the configuration readable by the service's group: the service runs as
/// `pushward-bridge`, and a root-only `config.json` (0640 root:root) made it fail at start.
@Suite("make install's configuration", .timeLimit(.minutes(1)))
struct InstallConfigTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("config.json 0640 and its directory 0750 in the service's group; credentials stay root's")
    func configurationReadableByTheGroup() throws {
        let directory = try ScratchDirectory()
        // As root (CI, the packaging machine) a system group that is not root's own, so the test
        // sees the chgrp; as anyone else, their own group, which they may chgrp to.
        let group =
            getuid() == 0 ? "daemon" : String(cString: getgrgid(getgid()).pointee.gr_name)
        let expectedGroup = try #require(getgrnam(group)).pointee.gr_gid
        let make = try SpawnedProcess(
            executable: "/usr/bin/make",
            arguments: [
                "-C", Self.root.path, "--no-print-directory", "install-config",
                "DESTDIR=" + directory.url.path, "CONFIG_GROUP=" + group,
            ],
            environment: ["PATH": "/usr/bin:/bin"])
        #expect(make.wait(timeout: 30))
        #expect(make.terminationStatus == 0)
        func mode(_ path: String) -> (mode: mode_t, gid: gid_t) {
            var info = stat()
            _ = stat(directory.url.path + path, &info)
            return (info.st_mode & 0o7777, info.st_gid)
        }
        let config = mode("/etc/pushward-bridge/config.json")
        #expect(config.mode == 0o640 && config.gid == expectedGroup, "\(config)")
        let folder = mode("/etc/pushward-bridge")
        #expect(folder.mode == 0o750 && folder.gid == expectedGroup, "\(folder)")
        #expect(mode("/etc/pushward-bridge/credentials").mode == 0o700)
    }
}
