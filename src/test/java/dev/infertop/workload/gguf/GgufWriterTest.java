package dev.infertop.workload.gguf;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GgufWriterTest {

    @TempDir
    Path dir;

    @Test
    void everyMetadataTypeReadsBackWithItsTypeAndValueInOrder() throws IOException {
        GgufWriter writer = new GgufWriter()
                .put("a.uint32", MetadataValue.uint32(0xFFFF_FFFFL))
                .put("a.int32", MetadataValue.int32(-7))
                .put("a.uint64", MetadataValue.uint64(1L << 40))
                .put("a.float32", MetadataValue.float32(1e-5f))
                .put("a.bool", MetadataValue.bool(true))
                .put("a.string", MetadataValue.string("\u2581h\u00e9llo"))
                .put("a.strings", MetadataValue.strings(List.of("<s>", "", "\u2581tok")))
                .put("a.floats", MetadataValue.float32s(new float[] {0f, -1.5f, Float.MIN_VALUE}))
                .put("a.ints", MetadataValue.int32s(new int[] {2, 3, 6, Integer.MIN_VALUE}));
        Path file = writer.writeTo(dir.resolve("meta.gguf"), ProgressListener.NONE);

        GgufTestReader gguf = GgufTestReader.read(file);
        assertEquals(3, gguf.version);
        assertEquals(List.of("general.alignment", "a.uint32", "a.int32", "a.uint64", "a.float32", "a.bool", "a.string",
                "a.strings", "a.floats", "a.ints"), List.copyOf(gguf.metadata.keySet()));
        assertEquals(List.of(GgufValueType.UINT32, GgufValueType.UINT32, GgufValueType.INT32, GgufValueType.UINT64,
                GgufValueType.FLOAT32, GgufValueType.BOOL, GgufValueType.STRING, GgufValueType.ARRAY, GgufValueType.ARRAY,
                GgufValueType.ARRAY), List.copyOf(gguf.metadataTypes.values()));
        assertEquals(32L, gguf.metadata.get("general.alignment"));
        assertEquals(0xFFFF_FFFFL, gguf.metadata.get("a.uint32"));
        assertEquals(-7, gguf.metadata.get("a.int32"));
        assertEquals(1L << 40, gguf.metadata.get("a.uint64"));
        assertEquals(1e-5f, gguf.metadata.get("a.float32"));
        assertEquals(true, gguf.metadata.get("a.bool"));
        assertEquals("\u2581h\u00e9llo", gguf.metadata.get("a.string"));
        assertEquals(List.of("<s>", "", "\u2581tok"), gguf.metadata.get("a.strings"));
        assertArrayEquals(new float[] {0f, -1.5f, Float.MIN_VALUE}, (float[]) gguf.metadata.get("a.floats"));
        assertArrayEquals(new int[] {2, 3, 6, Integer.MIN_VALUE}, (int[]) gguf.metadata.get("a.ints"));
        assertTrue(gguf.tensors.isEmpty());
        assertEquals(writer.fileSizeBytes(), Files.size(file));
    }

    @Test
    void tensorsArePackedInOrderAtAlignedOffsetsWithZeroPadding() throws IOException {
        GgufWriter writer = new GgufWriter(64)
                .put("general.name", MetadataValue.string("odd sizes"))
                .add(new GgufTensor("three.f16", GgmlType.F16, new long[] {3}, sink -> {
                    sink.putFloat16(1f);
                    sink.putFloat16(-2f);
                    sink.putFloat16(0.5f);
                }))
                .add(new GgufTensor("matrix.f32", GgmlType.F32, new long[] {2, 3}, sink -> {
                    for (int i = 0; i < 6; i++) {
                        sink.putFloat32(i * 10f);
                    }
                }))
                .add(new GgufTensor("one.f32", GgmlType.F32, new long[] {1, 1, 1}, sink -> sink.putFloat32(7f)));
        Path file = writer.writeTo(dir.resolve("t.gguf"), ProgressListener.NONE);

        GgufTestReader gguf = GgufTestReader.read(file);
        assertEquals(64, gguf.alignmentBytes);
        assertEquals(0, gguf.dataStartBytes % 64);
        assertEquals(List.of("three.f16", "matrix.f32", "one.f32"), List.copyOf(gguf.tensors.keySet()));
        assertEquals(0, gguf.tensors.get("three.f16").offsetBytes());
        assertEquals(64, gguf.tensors.get("matrix.f32").offsetBytes());
        assertEquals(128, gguf.tensors.get("one.f32").offsetBytes());
        assertArrayEquals(new long[] {2, 3}, gguf.tensors.get("matrix.f32").dims());
        assertEquals(GgmlType.F16.code(), gguf.tensors.get("three.f16").typeCode());
        assertEquals(-2f, gguf.element("three.f16", 1));
        assertEquals(50f, gguf.element("matrix.f32", 5));
        assertEquals(7f, gguf.element("one.f32", 0));
        assertArrayEquals(new byte[64 - 6], gguf.paddingAfter("three.f16"));
        assertArrayEquals(new byte[64 - 4], gguf.paddingAfter("one.f32"));
        assertEquals(gguf.dataStartBytes + 3 * 64, Files.size(file));
        assertEquals(writer.fileSizeBytes(), Files.size(file));
    }

    @Test
    void streamsTensorsLargerThanOneChunkAndReportsProgressUpToTheTotal() throws IOException {
        int elements = 3 * TensorSink.CHUNK_SIZE_BYTES / 2 + 5;
        GgufWriter writer = new GgufWriter().add(new GgufTensor("big", GgmlType.F16, new long[] {elements}, sink -> {
            for (int i = 0; i < elements; i++) {
                sink.putFloat16Bits((short) i);
            }
        }));
        List<long[]> reports = new ArrayList<>();
        Path file = writer.writeTo(dir.resolve("big.gguf"), (written, total) -> reports.add(new long[] {written, total}));

        GgufTestReader gguf = GgufTestReader.read(file);
        ByteBuffer data = gguf.tensorData("big");
        for (int i : new int[] {0, 1, TensorSink.CHUNK_SIZE_BYTES / 2, elements - 1}) {
            assertEquals((short) i, data.getShort(i * 2), "element " + i);
        }
        assertTrue(reports.size() >= 3, "one report per chunk, got " + reports.size());
        for (int i = 1; i < reports.size(); i++) {
            assertTrue(reports.get(i)[0] >= reports.get(i - 1)[0], "progress never goes back");
        }
        long[] last = reports.getLast();
        assertEquals(Files.size(file), last[0]);
        assertEquals(Files.size(file), last[1]);
    }

    @Test
    void failureMidTensorLeavesNeitherTheFileNorItsTemp() throws IOException {
        Path file = dir.resolve("broken.gguf");
        GgufWriter writer = new GgufWriter().add(new GgufTensor("t", GgmlType.F32, new long[] {1 << 20}, sink -> {
            for (int i = 0; i < 1 << 19; i++) {
                sink.putFloat32(i);
            }
            throw new IOException("disk on fire");
        }));
        IOException thrown = assertThrows(IOException.class, () -> writer.writeTo(file, ProgressListener.NONE));
        assertEquals("disk on fire", thrown.getMessage());
        assertFalse(Files.exists(file));
        assertNoTemporaryBeside(file);
    }

    @Test
    void failedRewriteKeepsThePreviousFileIntact() throws IOException {
        Path file = dir.resolve("model.gguf");
        Files.writeString(file, "previous complete model");
        GgufWriter writer = new GgufWriter().add(new GgufTensor("t", GgmlType.F16, new long[] {4}, sink -> {
            throw new IllegalStateException("generator bug");
        }));
        assertThrows(IllegalStateException.class, () -> writer.writeTo(file, ProgressListener.NONE));
        assertEquals("previous complete model", Files.readString(file));
        assertNoTemporaryBeside(file);
    }

    @Test
    void tensorWritingTheWrongNumberOfBytesIsRejected() throws IOException {
        Path file = dir.resolve("short.gguf");
        GgufWriter writer = new GgufWriter().add(new GgufTensor("short", GgmlType.F32, new long[] {4}, sink -> sink.putFloat32(1f)));
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> writer.writeTo(file, ProgressListener.NONE));
        assertEquals("tensor short produced 4 bytes, expected 16", thrown.getMessage());
        assertFalse(Files.exists(file));
        assertNoTemporaryBeside(file);
    }

    @Test
    void successfulWriteLeavesOnlyTheFinalFile() throws IOException {
        Path file = new GgufWriter().put("k", MetadataValue.bool(false)).writeTo(dir.resolve("only.gguf"), ProgressListener.NONE);
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(file), files.toList());
        }
    }

    @Test
    void rejectsInvalidLayouts() {
        assertThrows(IllegalArgumentException.class, () -> new GgufWriter(24));
        assertThrows(IllegalArgumentException.class, () -> new GgufWriter().put("general.alignment", MetadataValue.uint32(64)));
        assertThrows(IllegalArgumentException.class, () -> new GgufWriter().put("k", MetadataValue.int32(1)).put("k", MetadataValue.int32(2)));
        TensorData none = sink -> { };
        assertThrows(IllegalArgumentException.class,
                () -> new GgufWriter().add(new GgufTensor("x", GgmlType.F32, new long[] {1}, none))
                        .add(new GgufTensor("x", GgmlType.F32, new long[] {1}, none)));
        assertThrows(IllegalArgumentException.class, () -> new GgufTensor("x", GgmlType.F32, new long[] {1, 1, 1, 1, 1}, none));
        assertThrows(IllegalArgumentException.class, () -> new GgufTensor("x", GgmlType.F32, new long[] {0}, none));
        assertThrows(IllegalArgumentException.class, () -> new GgufTensor("x".repeat(64), GgmlType.F32, new long[] {1}, none));
        assertThrows(IllegalArgumentException.class, () -> MetadataValue.uint32(-1));
    }

    @Test
    void linksAtPredictableNamesAreNeverWrittenThrough() throws IOException {
        // infertop runs as root: a link planted at the old NAME.tmp or at NAME itself must not redirect the write.
        Path victim = dir.resolve("victim");
        Files.writeString(victim, "precious");
        Path file = dir.resolve("m.gguf");
        Files.createSymbolicLink(dir.resolve("m.gguf.tmp"), victim);
        new GgufWriter().put("k", MetadataValue.bool(true)).writeTo(file, ProgressListener.NONE);
        assertEquals("precious", Files.readString(victim));
        assertTrue(Files.isRegularFile(file, java.nio.file.LinkOption.NOFOLLOW_LINKS));

        Path linked = dir.resolve("linked.gguf");
        Files.createSymbolicLink(linked, victim);
        IOException refused = assertThrows(IOException.class,
                () -> new GgufWriter().put("k", MetadataValue.bool(true)).writeTo(linked, ProgressListener.NONE));
        assertEquals(linked + " is a symbolic link: infertop does not write through links (it runs as root);"
                + " remove it or choose another name", refused.getMessage());
        assertEquals("precious", Files.readString(victim));
        assertTrue(Files.isSymbolicLink(linked));
    }

    /** The writer's temporary (a fresh .NAME.RANDOM.tmp) is gone. */
    private static void assertNoTemporaryBeside(Path file) throws IOException {
        try (java.util.stream.Stream<Path> siblings = Files.list(file.toAbsolutePath().getParent())) {
            List<String> temporaries = siblings.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".tmp")).toList();
            assertTrue(temporaries.isEmpty(), temporaries.toString());
        }
    }
}
