package dev.infertop.session;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LostRecordsNoticeTest {
    @Test
    void saysNothingUntilRecordsAreLostThenOnceWithTheRingSize() {
        LostRecordsNotice notice = new LostRecordsNotice(4096, 1.0);
        assertNull(notice.check(0));
        String line = notice.check(7440);
        assertEquals("infertop: lost 7440 probe records; --ring-kib above 4096 keeps them (the ring buffer filled "
                + "before infertop read it, the target outpacing the collector, or a record did not decode). The "
                + "counts leave out what was lost", line);
        assertNull(notice.check(9000), "said once");
    }

    @Test
    void withEveryGraphTracedAlsoNamesTheBudget() {
        String line = new LostRecordsNotice(4096, 0).check(12);
        assertTrue(line.startsWith("infertop: lost 12 probe records; --ring-kib above 4096 or --budget above 0 keeps "
                + "them ("), line);
    }

    @Test
    void atTheLargestRingNamesWhatIsLeft() {
        assertTrue(new LostRecordsNotice(1 << 20, 0).check(1).contains("; --budget above 0 keeps them ("));
        assertTrue(new LostRecordsNotice(1 << 20, 1).check(1).contains("; fewer layers on keeps them ("));
    }
}
