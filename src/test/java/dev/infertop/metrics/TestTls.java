package dev.infertop.metrics;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed certificate for 127.0.0.1 and its key, as the PEM files a web config names, made with the JDK's
 * own keytool (no openssl, no BouncyCastle): keytool writes a PKCS#12 store, from which the certificate goes out
 * as PEM and the key as PKCS#8 PEM ({@code Key.getEncoded()} of a private key is PKCS#8).
 */
public final class TestTls {
    private TestTls() {}

    /** The certificate file, the key file and a client context that trusts the certificate. */
    public record Pair(Path certFile, Path keyFile, SSLContext trusting) {}

    private static final char[] PASSWORD = "changeit".toCharArray();

    /** @param algorithm RSA or EC */
    public static Pair selfSigned(Path directory, String algorithm) throws Exception {
        Path store = directory.resolve(algorithm.toLowerCase() + ".p12");
        Files.deleteIfExists(store);
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        List<String> command = new java.util.ArrayList<>(List.of(keytool.toString(), "-genkeypair", "-alias", "infertop",
                "-keyalg", algorithm, "-dname", "CN=127.0.0.1", "-ext", "san=ip:127.0.0.1", "-validity", "2",
                "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", new String(PASSWORD)));
        command.addAll(algorithm.equals("EC") ? List.of("-groupname", "secp256r1") : List.of("-keysize", "2048"));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String said = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IOException("keytool failed: " + said);
        }
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, PASSWORD);
        }
        Certificate certificate = keys.getCertificate("infertop");
        Key key = keys.getKey("infertop", PASSWORD);
        Path certFile = directory.resolve(algorithm.toLowerCase() + "-cert.pem");
        Path keyFile = directory.resolve(algorithm.toLowerCase() + "-key.pem");
        Files.writeString(certFile, pem("CERTIFICATE", certificate.getEncoded()));
        Files.writeString(keyFile, pem("PRIVATE KEY", key.getEncoded()));

        KeyStore trusted = KeyStore.getInstance("PKCS12");
        trusted.load(null, null);
        trusted.setCertificateEntry("infertop", certificate);
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trusted);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return new Pair(certFile, keyFile, context);
    }

    static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }
}
