package dev.infertop.metrics;

import at.favre.lib.crypto.bcrypt.BCrypt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The exporter-toolkit web config: what it reads, and each refusal in one line that says what to fix. */
class WebConfigTest {
    @TempDir
    Path directory;

    private Path write(String yaml) throws Exception {
        Path file = directory.resolve("web.yml");
        Files.writeString(file, yaml);
        return file;
    }

    private String refusal(String yaml) throws Exception {
        Path file = write(yaml);
        String message = assertThrows(IllegalArgumentException.class, () -> WebConfig.read(file)).getMessage();
        assertFalse(message.contains("\n") || message.contains("\r"), "one line: " + message);
        assertFalse(message.contains("Exception"), message);
        return message;
    }

    @Test
    void readsTlsAndUsers() throws Exception {
        TestTls.Pair rsa = TestTls.selfSigned(directory, "RSA");
        WebConfig config = WebConfig.read(MetricsServerTest.webConfig(directory, rsa, "alice", "pw"));
        assertTrue(config.tls());
        assertTrue(config.basicAuth());
        assertEquals(BasicAuth.Verdict.PASSED, config.auth().check(MetricsServerTest.basic("alice", "pw"),
                InetAddress.getLoopbackAddress()).verdict());
        WebConfig empty = WebConfig.read(write(""));
        assertFalse(empty.tls() || empty.basicAuth(), "an empty file, as the exporter-toolkit reads it");
        WebConfig usersOnly = WebConfig.read(write("basic_auth_users:\n  bob: "
                + BCrypt.withDefaults().hashToString(4, "x".toCharArray()) + "\n"));
        assertFalse(usersOnly.tls());
        assertTrue(usersOnly.basicAuth());
    }

    @Test
    void unknownKeysAreRefused() throws Exception {
        assertEquals("unknown key 'http_server_config' (infertop reads tls_server_config and basic_auth_users)",
                refusal("http_server_config:\n  http2: false\n"));
        assertEquals("tls_server_config: unknown key 'client_auth_type' (infertop reads cert_file and key_file)",
                refusal("tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  client_auth_type: RequireAndVerifyClientCert\n"));
        assertEquals("unknown key 'basic_auth_user' (infertop reads tls_server_config and basic_auth_users)",
                refusal("basic_auth_user:\n  a: b\n"), "a typo must not leave the endpoint open");
        assertEquals("tls_server_config needs both cert_file and key_file", refusal("tls_server_config:\n  cert_file: c.pem\n"));
        assertEquals("the file is not a mapping of keys (infertop reads tls_server_config and basic_auth_users)",
                refusal("- a\n- b\n"));
    }

    @Test
    void badYamlAndUnreadableFilesAreOneLine() throws Exception {
        String yaml = refusal("tls_server_config: [\n  cert_file: x\n");
        assertTrue(yaml.startsWith("not valid YAML at line "), yaml);
        String duplicate = refusal("basic_auth_users:\n  a: x\nbasic_auth_users:\n  b: y\n");
        assertTrue(duplicate.startsWith("not valid YAML at line 3: Duplicate field 'basic_auth_users'"), duplicate);
        assertEquals("cannot read it: no such file", assertThrows(IllegalArgumentException.class,
                () -> WebConfig.read(directory.resolve("missing.yml"))).getMessage());
        assertEquals("cannot read it: a directory", assertThrows(IllegalArgumentException.class,
                () -> WebConfig.read(directory)).getMessage());
    }

    @Test
    void passwordsMustBeBcryptHashes() throws Exception {
        assertEquals("basic_auth_users: alice's password is not a bcrypt hash ($2y$10$ and 53 characters, as "
                + "htpasswd -nBC 10 USER writes it)", refusal("basic_auth_users:\n  alice: secret\n"));
        assertEquals("basic_auth_users: 'a:b' cannot be a user name (empty, a colon or a control character)",
                refusal("basic_auth_users:\n  \"a:b\": " + BCrypt.withDefaults().hashToString(4, "x".toCharArray()) + "\n"));
    }

    /** config/web-config.yml names only keys infertop reads, and starts nothing until its hash is filled in. */
    @Test
    void theShippedExampleWantsItsHash() throws Exception {
        String example = Files.readString(Path.of("config/web-config.yml"));
        TestTls.Pair rsa = TestTls.selfSigned(directory, "RSA");
        Files.copy(rsa.certFile(), directory.resolve("cert.pem"));
        Files.copy(rsa.keyFile(), directory.resolve("key.pem"));
        assertEquals("basic_auth_users: prometheus's password is not a bcrypt hash ($2y$10$ and 53 characters, as "
                + "htpasswd -nBC 10 USER writes it)", refusal(example));
        WebConfig filled = WebConfig.read(write(example.replace("PUT-THE-HASH-FROM-htpasswd-HERE",
                BCrypt.with(BCrypt.Version.VERSION_2Y).hashToString(4, "pw".toCharArray()))));
        assertTrue(filled.tls() && filled.basicAuth());
    }

    @Test
    void certificateAndKeyProblemsAreOneLine() throws Exception {
        TestTls.Pair rsa = TestTls.selfSigned(directory, "RSA");
        TestTls.Pair ec = TestTls.selfSigned(directory, "EC");
        String tls = "tls_server_config:\n  cert_file: %s\n  key_file: %s\n";
        assertEquals("key_file " + directory.resolve("missing.pem") + ": cannot read it: no such file",
                refusal(tls.formatted(rsa.certFile(), "missing.pem")));
        String rsaKeyForEc = refusal(tls.formatted(ec.certFile(), rsa.keyFile()));
        assertTrue(rsaKeyForEc.startsWith("key_file " + rsa.keyFile() + " is not a PKCS#8 EC private key (the "
                + "certificate's is EC): "), rsaKeyForEc);
        Path otherRsa = directory.resolve("other");
        Files.createDirectories(otherRsa);
        TestTls.Pair another = TestTls.selfSigned(otherRsa, "RSA");
        assertEquals("key_file " + another.keyFile() + " is not the key of the certificate in cert_file",
                refusal(tls.formatted(rsa.certFile(), another.keyFile())));
        assertEquals("cert_file " + rsa.keyFile() + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
                refusal(tls.formatted(rsa.keyFile(), rsa.keyFile())));
        Path pkcs1 = directory.resolve("pkcs1.pem");
        Files.writeString(pkcs1, TestTls.pem("RSA PRIVATE KEY", new byte[] {1, 2, 3}));
        assertEquals("key_file " + pkcs1 + " holds an RSA key in its own format: infertop reads PKCS#8 (openssl pkcs8 "
                + "-topk8 -nocrypt -in " + pkcs1 + " -out KEY)", refusal(tls.formatted(rsa.certFile(), pkcs1)));
        Path garbled = directory.resolve("garbled.pem");
        Files.writeString(garbled, "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n",
                StandardCharsets.US_ASCII);
        assertTrue(refusal(tls.formatted(garbled, rsa.keyFile())).startsWith("cert_file " + garbled
                + " is not a PEM certificate chain: "));
    }
}
