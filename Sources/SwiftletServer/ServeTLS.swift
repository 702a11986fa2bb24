import DTLS
import Foundation
import TLS

#if canImport(Glibc)
    import Glibc
#endif

/// The HTTPS/WSS listener's certificate: read from the configured PEM
/// files (or, for `--dev --tls`, generated and written to a temporary
/// directory first), reloaded on SIGHUP. docs/TLS.md.
enum ServeTLS {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// The PEM files the listener serves and where they came from.
    struct Files {
        var certificate: String
        var key: String
        var generated: Bool
    }

    /// The files to serve: the configured ones, or a fresh self-signed
    /// certificate for localhost, 127.0.0.1 and ::1 (`--dev --tls`).
    static func files(_ options: ServeOptions) throws(Failure) -> Files {
        if let certificate = options.tlsCertPath, let key = options.tlsKeyPath {
            return Files(certificate: certificate, key: key, generated: false)
        }
        let generated: DTLSCertificate
        do {
            // subjectAltName, not the CN, is what curl, Python and Chromium
            // match the host against (RFC 6125 section 6.4.4).
            generated = try DTLSCertificate.generate(
                issuedAt: Int64(time(nil)), subjectAltNames: "DNS:localhost,IP:127.0.0.1,IP:::1")
        } catch {
            throw Failure(description: "cannot generate the dev TLS certificate: \(error)")
        }
        let directory = NSTemporaryDirectory() + "swiftlet-dev-tls-\(getpid())"
        let files = Files(certificate: directory + "/cert.pem", key: directory + "/key.pem", generated: true)
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Data(generated.certificatePEM.utf8).write(to: URL(fileURLWithPath: files.certificate))
            try Data(generated.privateKeyPEM.utf8).write(to: URL(fileURLWithPath: files.key))
            chmod(files.key, 0o600)
        } catch {
            throw Failure(description: "cannot write the dev TLS certificate to \(directory): \(error.localizedDescription)")
        }
        return files
    }

    /// Reads and checks both files; the error names the file and the fault.
    static func load(_ files: Files) throws(Failure) -> TLSContext {
        let chain: String
        let key: String
        do {
            chain = try String(contentsOfFile: files.certificate, encoding: .utf8)
        } catch {
            throw Failure(description: "cannot read the TLS certificate \(files.certificate): \(error.localizedDescription)")
        }
        do {
            key = try String(contentsOfFile: files.key, encoding: .utf8)
        } catch {
            throw Failure(description: "cannot read the TLS key \(files.key): \(error.localizedDescription)")
        }
        do {
            return try TLSContext.server(certificateChainPEM: chain, privateKeyPEM: key)
        } catch {
            throw Failure(description: "\(files.certificate) / \(files.key): \(error)")
        }
    }

    /// SIGHUP: new connections get the files' current contents; on any
    /// fault the old certificate stays and the reason is logged.
    static func reload(_ files: Files, into slot: TLSContextSlot) {
        do {
            let context = try load(files)
            slot.replace(with: context)
            print("swiftlet: SIGHUP: TLS certificate reloaded (\(context.leafSubject), spki \(spki(context)))")
        } catch {
            print("swiftlet: SIGHUP: TLS certificate NOT reloaded, keeping the old one: \(error)")
        }
        fflush(nil)
    }

    /// Removes a generated certificate's directory on the way out.
    static func cleanUp(_ files: Files) {
        guard files.generated else { return }
        try? FileManager.default.removeItem(atPath: (files.certificate as NSString).deletingLastPathComponent)
    }

    /// The value for Chromium's `--ignore-certificate-errors-spki-list`.
    static func spki(_ context: TLSContext) -> String { Data(context.leafSPKISHA256).base64EncodedString() }
}
