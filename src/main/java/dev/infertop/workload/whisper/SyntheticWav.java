package dev.infertop.workload.whisper;

import dev.infertop.io.OutputFiles;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A WAV file whisper.cpp reads as it is (RIFF, PCM, 16-bit, mono, 16 kHz: whisper's own sample rate, so no
 * resampling): a rising tone under a little noise, deterministic, a given number of seconds long.
 */
public final class SyntheticWav {
    public static final int SAMPLE_RATE_HZ = 16_000;
    private static final int HEADER_BYTES = 44;

    private SyntheticWav() {
    }

    public static long sampleCount(int seconds) {
        return (long) seconds * SAMPLE_RATE_HZ;
    }

    public static byte[] encode(int seconds) {
        if (seconds <= 0 || seconds > 600) {
            throw new IllegalArgumentException("a synthetic WAV of 1 to 600 s, not " + seconds);
        }
        int samples = Math.toIntExact(sampleCount(seconds));
        int dataBytes = samples * 2;
        ByteBuffer out = ByteBuffer.allocate(HEADER_BYTES + dataBytes).order(ByteOrder.LITTLE_ENDIAN);
        out.put("RIFF".getBytes(StandardCharsets.US_ASCII)).putInt(36 + dataBytes);
        out.put("WAVE".getBytes(StandardCharsets.US_ASCII));
        out.put("fmt ".getBytes(StandardCharsets.US_ASCII)).putInt(16);
        out.putShort((short) 1); // PCM
        out.putShort((short) 1); // mono
        out.putInt(SAMPLE_RATE_HZ).putInt(SAMPLE_RATE_HZ * 2); // byte rate
        out.putShort((short) 2).putShort((short) 16); // block align, bits per sample
        out.put("data".getBytes(StandardCharsets.US_ASCII)).putInt(dataBytes);
        long noise = 0x2545F4914F6CDD1DL;
        double phase = 0;
        for (int i = 0; i < samples; i++) {
            double t = (double) i / SAMPLE_RATE_HZ;
            phase += 2 * Math.PI * (200 + 400 * t / seconds) / SAMPLE_RATE_HZ;
            noise ^= noise << 13;
            noise ^= noise >>> 7;
            noise ^= noise << 17;
            double value = 0.3 * Math.sin(phase) + 0.02 * ((noise >>> 11) * 0x1.0p-53 * 2 - 1);
            out.putShort((short) Math.round(value * Short.MAX_VALUE));
        }
        return out.array();
    }

    /** Writes {@code seconds} of audio to {@code file} atomically. */
    public static Path writeTo(Path file, int seconds) throws IOException {
        byte[] bytes = encode(seconds);
        OutputFiles.replace(file, out -> out.write(bytes));
        return file;
    }

    /** {@code whisper-synthetic-Ns.wav} in {@code cacheDir}, written if missing or of another size. */
    public static Path writeToCache(Path cacheDir, int seconds) throws IOException {
        Path file = cacheDir.resolve("whisper-synthetic-" + seconds + "s.wav");
        if (Files.isRegularFile(file) && Files.size(file) == HEADER_BYTES + 2 * sampleCount(seconds)) {
            return file;
        }
        Files.createDirectories(cacheDir);
        return writeTo(file, seconds);
    }
}
