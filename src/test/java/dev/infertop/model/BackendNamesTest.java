package dev.infertop.model;

import dev.infertop.io.ConfigFiles;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BackendNamesTest {
    @Test
    void shippedConfigNamesCpuAndBlasFromTheirSourceGuids() {
        BackendNames names = ConfigFiles.backendNames();
        // ggml-cpu.cpp: { 0xaa, 0x67, 0xc7, 0x43, 0x96, 0xe6, 0xa3, 0x8a, 0xe3, 0xaf, 0xea, 0x92, 0x36, 0xbc, 0xfc, 0x89 }
        assertEquals("CPU", names.name(0xaa67c74396e6a38aL, 0xe3afea9236bcfc89L));
        // ggml-blas.cpp: { 0x12, 0xa8, 0xae, 0xf4, 0xc0, 0x1e, 0x61, 0x97, 0x8f, 0xeb, 0x33, 0x04, 0xa1, 0x33, 0x51, 0x2d }
        assertEquals("BLAS", names.name(0x12a8aef4c01e6197L, 0x8feb3304a133512dL));
        assertEquals("CUDA", names.name(0x2cdde81c65b36573L, 0x6a1288611cc9dc25L));
    }

    @Test
    void laterLinesOverrideAndUnknownGuidsShowAsHex() {
        BackendNames names = BackendNames.parse("""
                # comment
                000102030405060708090a0b0c0d0e0f  First
                000102030405060708090a0b0c0d0e0f  Second
                """);
        assertEquals("Second", names.name(0x0001020304050607L, 0x08090a0b0c0d0e0fL));
        assertNull(names.nameOrNull(1, 1));
        assertTrue(names.name(1, 1).startsWith("guid:"));
        assertEquals("unknown", names.name(0, 0));
    }

    @Test
    void malformedLineIsRejectedWithItsLineNumber() {
        var error = assertThrows(IllegalArgumentException.class, () -> BackendNames.parse("zz CPU\n"));
        assertTrue(error.getMessage().contains(":1:"), error.getMessage());
    }
}
