package dev.infertop.session;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The kernel's own BTF is checked by its header only (libbpf parses it at the load): a file that is not BTF. */
class PreflightTest {
    @TempDir
    Path dir;

    @Test
    void theKernelsBtfPassesItsHeaderCheck() {
        Path kernel = Path.of("/sys/kernel/btf/vmlinux");
        if (!Files.isReadable(kernel)) {
            assertFalse("true".equals(System.getenv("CI")), "this kernel has no BTF (CI=true: required)");
            assumeTrue(false, "this kernel has no BTF");
        }
        assertDoesNotThrow(() -> Preflight.requireBtfMagic(kernel));
    }

    @Test
    void aFileThatIsNotBtfEndsInOneLine() throws Exception {
        Path elf = Files.write(dir.resolve("vmlinux"), new byte[] {0x7f, 'E', 'L', 'F'});
        UserError e = assertThrows(UserError.class, () -> Preflight.requireBtfMagic(elf));
        assertTrue(e.getMessage().contains("is not BTF: pass --btf FILE"), e.getMessage());
        Path empty = Files.write(dir.resolve("empty"), new byte[0]);
        assertThrows(UserError.class, () -> Preflight.requireBtfMagic(empty));
        Path big = Files.write(dir.resolve("be"), new byte[] {(byte) 0xeb, (byte) 0x9f});
        assertThrows(UserError.class, () -> Preflight.requireBtfMagic(big), "the magic byte-swapped");
    }
}
