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
        assertEquals("infertop: 7440 probe records lost: the ring buffer filled before infertop read it (the target "
                + "outpaced the collector); a larger --ring-kib (now 4096, a power of two up to 1048576) keeps them. "
                + "The counts leave out what was lost; \"lost\" in the header counts on", line);
        assertNull(notice.check(9000), "said once");
    }

    @Test
    void withEveryGraphTracedAlsoNamesTheBudget() {
        String line = new LostRecordsNotice(4096, 0).check(12);
        assertTrue(line.contains("a larger --ring-kib (now 4096, a power of two up to 1048576) or a --budget above 0 "
                + "(now 0: every graph traced) keeps them"), line);
    }

    @Test
    void atTheLargestRingNamesWhatIsLeft() {
        assertTrue(new LostRecordsNotice(1 << 20, 0).check(1).contains("; a --budget above 0 (now 0: every graph "
                + "traced) keeps them"));
        assertTrue(new LostRecordsNotice(1 << 20, 1).check(1).contains("; fewer layers on keeps them"));
    }
}
