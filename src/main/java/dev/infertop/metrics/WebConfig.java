package dev.infertop.metrics;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.infertop.model.SafeText;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code --web-config FILE}: TLS and basic auth for {@code --listen}, from a file in the Prometheus
 * exporter-toolkit's format (the one node_exporter's {@code --web.config.file} reads), of which infertop reads
 * {@code tls_server_config.cert_file} and {@code .key_file} (PEM certificate chain, PKCS#8 PEM private key:
 * RSA, EC or Ed25519; relative paths from the file's directory) and {@code basic_auth_users} (user: bcrypt
 * hash). Any other key, a value of the wrong kind, a file that cannot be read or a key that does not match its
 * certificate is refused when infertop starts, in one line: a typo must not leave the endpoint open.
 */
public final class WebConfig {
    /** Bigger than any web config, certificate chain or key; a larger file is a mistake, not read whole. */
    private static final long MAX_FILE_BYTES = 1 << 20;
    private static final Set<String> TOP_KEYS = Set.of("tls_server_config", "basic_auth_users");
    private static final Set<String> TLS_KEYS = Set.of("cert_file", "key_file");
    private static final Pattern PEM = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*)-----END \\1-----");
    private static final int SESSION_CACHE_SIZE = 64;
    private static final int SESSION_TIMEOUT_S = 3600;
    /** Throwaway: the in-memory key store's key needs one. */
    private static final char[] STORE_PASSWORD = "infertop".toCharArray();

    private final Path file;
    private final SSLContext tls;
    private final BasicAuth auth;

    private WebConfig(Path file, SSLContext tls, BasicAuth auth) {
        this.file = file;
        this.tls = tls;
        this.auth = auth;
    }

    /** The file as given. */
    public Path file() {
        return file;
    }

    /** Whether the endpoint speaks TLS. */
    public boolean tls() {
        return tls != null;
    }

    /** Whether a scrape must give a user and password. */
    public boolean basicAuth() {
        return auth != null;
    }

    SSLSocketFactory socketFactory() {
        return tls == null ? null : tls.getSocketFactory();
    }

    BasicAuth auth() {
        return auth;
    }

    /**
     * Reads and checks {@code file}, its certificate and key included.
     *
     * @throws IllegalArgumentException what is wrong, in one line (without the file's name: the caller says it)
     */
    public static WebConfig read(Path file) {
        JsonNode root;
        try {
            String text = new String(readBounded(file), StandardCharsets.UTF_8);
            ObjectMapper yaml = new ObjectMapper(new YAMLFactory())
                    .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
            root = yaml.readTree(text);
        } catch (JacksonException e) {
            JsonLocation where = e.getLocation();
            throw new IllegalArgumentException("not valid YAML"
                    + (where == null || where.getLineNr() < 1 ? "" : " at line " + where.getLineNr())
                    + ": " + oneLine(e.getOriginalMessage()));
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read it: " + why(e));
        }
        if (root == null || root.isMissingNode() || root.isNull()) {
            return new WebConfig(file, null, null); // an empty file, as the exporter-toolkit reads it: no TLS, no auth
        }
        requireMapping(root, "the file", TOP_KEYS, "tls_server_config and basic_auth_users");
        Path directory = file.toAbsolutePath().getParent();
        SSLContext tls = null;
        JsonNode tlsNode = root.get("tls_server_config");
        if (tlsNode != null && !tlsNode.isNull()) {
            requireMapping(tlsNode, "tls_server_config", TLS_KEYS, "cert_file and key_file");
            String certFile = string(tlsNode, "cert_file", "tls_server_config");
            String keyFile = string(tlsNode, "key_file", "tls_server_config");
            if (certFile == null || keyFile == null) {
                throw new IllegalArgumentException("tls_server_config needs both cert_file and key_file");
            }
            tls = tlsContext(directory.resolve(certFile), directory.resolve(keyFile));
        }
        BasicAuth auth = null;
        JsonNode usersNode = root.get("basic_auth_users");
        if (usersNode != null && !usersNode.isNull()) {
            if (!usersNode.isObject()) {
                throw new IllegalArgumentException("basic_auth_users is a mapping of user names to bcrypt hashes");
            }
            Map<String, String> users = new LinkedHashMap<>();
            for (Map.Entry<String, JsonNode> user : usersNode.properties()) {
                String name = user.getKey();
                if (name.isEmpty() || name.contains(":") || name.chars().anyMatch(c -> c < ' ' || c == 0x7f)) {
                    throw new IllegalArgumentException("basic_auth_users: '" + SafeText.of(name)
                            + "' cannot be a user name (empty, a colon or a control character)");
                }
                JsonNode hash = user.getValue();
                if (!hash.isTextual() || !BasicAuth.isBcryptHash(hash.asText())) {
                    throw new IllegalArgumentException("basic_auth_users: " + SafeText.of(name)
                            + "'s password is not a bcrypt hash ($2y$10$ and 53 characters, as htpasswd -nBC 10 USER "
                            + "writes it)");
                }
                users.put(name, hash.asText());
            }
            if (!users.isEmpty()) {
                auth = new BasicAuth(users);
            }
        }
        return new WebConfig(file, tls, auth);
    }

    private static void requireMapping(JsonNode node, String what, Set<String> keys, String known) {
        if (!node.isObject()) {
            throw new IllegalArgumentException(what + " is not a mapping of keys (infertop reads " + known + ")");
        }
        for (String key : (Iterable<String>) node::fieldNames) {
            if (!keys.contains(key)) {
                throw new IllegalArgumentException((what.equals("the file") ? "" : what + ": ") + "unknown key '"
                        + SafeText.of(key) + "' (infertop reads " + known + ")");
            }
        }
    }

    private static String string(JsonNode node, String key, String where) {
        JsonNode value = node.get(key);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isTextual() || value.asText().isEmpty()) {
            throw new IllegalArgumentException(where + "." + key + " is a file name");
        }
        return value.asText();
    }

    /** A server context with the chain in {@code certFile} and the key in {@code keyFile}, which must match. */
    private static SSLContext tlsContext(Path certFile, Path keyFile) {
        List<X509Certificate> chain = certificates(certFile);
        PrivateKey key = privateKey(keyFile, chain.getFirst().getPublicKey());
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry("infertop", key, STORE_PASSWORD, chain.toArray(Certificate[]::new));
            KeyManagerFactory keys = KeyManagerFactory.getInstance("PKIX");
            keys.init(store, STORE_PASSWORD);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys.getKeyManagers(), null, null);
            // TLS 1.2 session ids are kept server-side (20480 for a day, by default): a client making handshakes
            // must not grow that. Prometheus opens one connection per scrape (every answer closes) and resumes.
            context.getServerSessionContext().setSessionCacheSize(SESSION_CACHE_SIZE);
            context.getServerSessionContext().setSessionTimeout(SESSION_TIMEOUT_S);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("cannot make a TLS context of " + certFile + " and " + keyFile + ": "
                    + why(e));
        }
    }

    private static List<X509Certificate> certificates(Path certFile) {
        byte[] bytes = readFile(certFile, "cert_file");
        if (!new String(bytes, StandardCharsets.US_ASCII).contains("-----BEGIN CERTIFICATE-----")) {
            throw new IllegalArgumentException("cert_file " + certFile + " holds no PEM certificate "
                    + "(-----BEGIN CERTIFICATE-----)");
        }
        try {
            Collection<? extends Certificate> read = CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(bytes));
            List<X509Certificate> chain = read.stream().map(X509Certificate.class::cast).toList();
            if (chain.isEmpty()) {
                throw new CertificateException("no certificate");
            }
            return chain;
        } catch (CertificateException | RuntimeException e) {
            throw new IllegalArgumentException("cert_file " + certFile + " is not a PEM certificate chain: " + why(e));
        }
    }

    private static PrivateKey privateKey(Path keyFile, PublicKey certified) {
        String text = new String(readFile(keyFile, "key_file"), StandardCharsets.US_ASCII);
        Matcher pem = PEM.matcher(text);
        if (!pem.find()) {
            throw new IllegalArgumentException("key_file " + keyFile + " holds no PEM private key "
                    + "(-----BEGIN PRIVATE KEY-----)");
        }
        String type = pem.group(1);
        if (!type.equals("PRIVATE KEY")) {
            throw new IllegalArgumentException("key_file " + keyFile + " holds " + switch (type) {
                case "ENCRYPTED PRIVATE KEY" -> "an encrypted key: infertop reads an unencrypted PKCS#8 key "
                        + "(openssl pkcs8 -topk8 -nocrypt -in " + keyFile + " -out KEY)";
                case "RSA PRIVATE KEY", "EC PRIVATE KEY" -> "an " + type.substring(0, type.indexOf(' '))
                        + " key in its own format: infertop reads PKCS#8 (openssl pkcs8 -topk8 -nocrypt -in "
                        + keyFile + " -out KEY)";
                default -> "a " + type + ", not a PKCS#8 private key (-----BEGIN PRIVATE KEY-----)";
            });
        }
        String algorithm = switch (certified.getAlgorithm()) {
            case "RSA" -> "RSA";
            case "EC" -> "EC";
            case "EdDSA", "Ed25519" -> "Ed25519";
            default -> throw new IllegalArgumentException("the certificate's key is " + certified.getAlgorithm()
                    + ": infertop serves RSA, EC and Ed25519 certificates");
        };
        PrivateKey key;
        try {
            byte[] der = Base64.getMimeDecoder().decode(pem.group(2));
            key = KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalArgumentException("key_file " + keyFile + " is not a PKCS#8 " + algorithm
                    + " private key (the certificate's is " + algorithm + "): " + why(e));
        }
        if (!matches(key, certified, algorithm)) {
            throw new IllegalArgumentException("key_file " + keyFile + " is not the key of the certificate in "
                    + "cert_file");
        }
        return key;
    }

    /** Whether {@code key} signs what {@code certified} verifies. */
    private static boolean matches(PrivateKey key, PublicKey certified, String algorithm) {
        String scheme = switch (algorithm) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            default -> "Ed25519";
        };
        byte[] message = "infertop".getBytes(StandardCharsets.US_ASCII);
        try {
            Signature signer = Signature.getInstance(scheme);
            signer.initSign(key);
            signer.update(message);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(scheme);
            verifier.initVerify(certified);
            verifier.update(message);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false; // an EC key on another curve than the certificate's, say
        }
    }

    private static byte[] readFile(Path path, String what) {
        try {
            return readBounded(path);
        } catch (IOException e) {
            throw new IllegalArgumentException(what + " " + path + ": cannot read it: " + why(e));
        }
    }

    private static byte[] readBounded(Path path) throws IOException {
        if (Files.isDirectory(path)) {
            throw new IOException("a directory");
        }
        try (var in = Files.newInputStream(path)) {
            byte[] bytes = in.readNBytes((int) MAX_FILE_BYTES + 1);
            if (bytes.length > MAX_FILE_BYTES) {
                throw new IOException("over " + (MAX_FILE_BYTES >> 20) + " MiB");
            }
            return bytes;
        }
    }

    /** An exception as a short reason: its message on one line (NoSuchFileException's is the bare path). */
    private static String why(Exception e) {
        if (e instanceof java.nio.file.NoSuchFileException) {
            return "no such file";
        }
        if (e instanceof java.nio.file.AccessDeniedException) {
            return "permission denied";
        }
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        // A wrapped cause's message starts with its class name (as many times as it was wrapped): the reason
        // is what follows.
        return oneLine(message.replaceFirst("^(([a-z][a-z0-9]*\\.)+[A-Za-z0-9]+(Exception|Error): )+", ""));
    }

    private static String oneLine(String text) {
        return SafeText.of(String.valueOf(text).replaceAll("\\s*\\R\\s*", " ").strip());
    }
}
