package dev.infertop.process;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;

/** /proc/PID/maps text (the target names its mappings' files): parsed, or refused with a TargetException. */
class ProcessMapsFuzzTest {
    @FuzzTest(maxDuration = "10s")
    void parse(FuzzedDataProvider data) {
        String text = data.consumeRemainingAsString();
        try {
            ProcessMaps maps = ProcessMaps.parse("fuzz", text);
            for (MemoryMapping mapping : maps.mappedLibraries()) {
                if (!mapping.isFileBacked() || !mapping.isExecutable()) {
                    throw new AssertionError("not a library: " + mapping);
                }
            }
            maps.findLibraries(p -> p.contains("libggml"));
            if (maps.mappings().size() > ProcessMaps.MAX_LINES) {
                throw new AssertionError(maps.mappings().size() + " mappings kept");
            }
        } catch (TargetException refused) {
            // a malformed line, named in one message
        }
    }
}
