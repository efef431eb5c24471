package dev.infertop.cli;

import dev.infertop.session.ListenOption;
import dev.infertop.session.TraceOptions;
import dev.infertop.session.UserError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * --listen, --web-config and --quiet as the command line gives them: one line and exit status 2, never a stack
 * trace.
 */
class ListenOptionTest {
    private static String[] run(String... args) {
        PrintStream saved = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int status = Main.run(args);
            return new String[] {Integer.toString(status), err.toString(StandardCharsets.UTF_8)};
        } finally {
            System.setErr(saved);
        }
    }

    @Test
    void aMalformedAddressIsOneLineAndStatusTwo() {
        String[] result = run("--listen", "localhost", "-p", "1");
        assertEquals("2", result[0]);
        assertEquals("infertop: --listen localhost: no port: give HOST:PORT, e.g. 127.0.0.1:9464, or :9464 for "
                + "loopback\n", result[1]);
        assertEquals("2", run("--listen", ":70000", "-p", "1")[0]);
    }

    @Test
    void quietIsOneOutputChoiceAmongOthers() {
        String[] result = run("--quiet", "--json", "-p", "1");
        assertEquals("2", result[0]);
        assertEquals("infertop: choose one of --batch, --json and --quiet\n", result[1]);
        InfertopCommand command = new InfertopCommand();
        new picocli.CommandLine(command).parseArgs("--quiet", "--listen", ":9464", "-p", "1");
        TraceOptions options = command.toOptions(java.util.Map.of(), null);
        assertEquals(TraceOptions.OutputMode.QUIET, options.output());
        assertEquals(9464, options.listen().port());
    }

    /** A web config that is not right ends infertop before anything else, in one line with its name. */
    @Test
    void aBadWebConfigIsOneLineAndStatusTwo(@TempDir Path directory) throws Exception {
        Path file = directory.resolve("web.yml");
        Files.writeString(file, "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  min_version: TLS13\n");
        String[] unknown = run("--listen", ":9464", "--web-config", file.toString(), "-p", "1");
        assertEquals("2", unknown[0]);
        assertEquals("infertop: --web-config " + file + ": tls_server_config: unknown key 'min_version' (infertop "
                + "reads cert_file and key_file)\n", unknown[1]);
        String[] missing = run("--listen", ":9464", "--web-config", directory.resolve("none.yml").toString(), "-p", "1");
        assertEquals("2", missing[0]);
        assertEquals("infertop: --web-config " + directory.resolve("none.yml") + ": cannot read it: no such file\n",
                missing[1]);
        Files.writeString(file, "");
        String[] alone = run("--web-config", file.toString(), "-p", "1");
        assertEquals("2", alone[0]);
        assertEquals("infertop: --web-config sets TLS and basic auth for --listen's endpoint: use it with --listen "
                + "HOST:PORT\n", alone[1]);
    }

    @Test
    void aTakenPortIsAUserErrorWithStatusTwo() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            UserError error = assertThrows(UserError.class,
                    () -> ListenOption.start(ListenOption.parse("127.0.0.1:" + taken.getLocalPort()), null,
                            line -> { }));
            assertEquals(2, error.exitCode());
            assertEquals("--listen 127.0.0.1:" + taken.getLocalPort() + ": port " + taken.getLocalPort()
                    + " is already taken (ss -ltnp shows by whom): choose another port", error.getMessage());
        }
    }
}
