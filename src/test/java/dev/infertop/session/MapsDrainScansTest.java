package dev.infertop.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class MapsDrainScansTest {
    private static final long MS = 1_000_000L;

    /** Drains every 10 ms for {@code seconds}, {@code records} each; scans counted as the session would run them. */
    private static int scans(MapsDrainScans schedule, long fromNs, int seconds, int records) {
        int scans = 0;
        for (long now = fromNs; now < fromNs + seconds * 1000 * MS; now += 10 * MS) {
            if (schedule.due(now, records)) {
                schedule.scanned(now);
                scans++;
            }
        }
        return scans;
    }

    @Test
    void anIdleTargetWithoutModelIsNotScannedTwentyTimesASecondForever() {
        MapsDrainScans schedule = new MapsDrainScans();
        int early = scans(schedule, 0, 2, 0);
        assertTrue(early >= 30 && early <= 40, "every ~50 ms in the first 2 s: " + early);
        assertEquals(0, scans(schedule, 2000 * MS, 60, 0), "after the first seconds the tick looks, not the drain");
    }

    @Test
    void theFirstRecordsAreLookedAtOnceThenAtMostEvery50Ms() {
        MapsDrainScans schedule = new MapsDrainScans();
        scans(schedule, 0, 10, 0);
        assertTrue(schedule.due(10_000 * MS, 5), "the first records: the model is loaded now");
        schedule.scanned(10_000 * MS);
        assertTrue(!schedule.due(10_010 * MS, 5), "not again 10 ms later");
        int flowing = scans(schedule, 10_020 * MS, 1, 5);
        assertTrue(flowing <= 20, "records flowing: at most every 50 ms, not every drain: " + flowing);
    }
}
