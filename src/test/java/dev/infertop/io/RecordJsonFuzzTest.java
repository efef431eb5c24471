package dev.infertop.io;

import com.code_intelligence.jazzer.junit.FuzzTest;

import java.util.List;
import java.util.Map;

/**
 * A cache file as bytes, read as the caches read theirs: a record or {@link RecordJson.Malformed}, never
 * another exception, a stack overflow or a hang (Jazzer's per-input time limit).
 */
class RecordJsonFuzzTest {
    record Site(String what, long fileOffset, String reason, String callee) {}

    record Entry(int formatVersion, String tool, long sizeBytes, double rate, boolean stripped,
                 Map<String, List<Site>> sites, List<String> names) {}

    @FuzzTest(maxDuration = "10s")
    void read(byte[] json) {
        try {
            RecordJson.read(json, Entry.class);
        } catch (RecordJson.Malformed expected) {
            // one line saying where
        }
    }
}
