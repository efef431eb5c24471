package dev.infertop.session;

import dev.infertop.process.ProcessUids;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static dev.infertop.session.FollowFilter.Verdict.FOLLOW;
import static dev.infertop.session.FollowFilter.Verdict.IGNORE;
import static dev.infertop.session.FollowFilter.Verdict.OTHER_USER;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** --follow NAME picks only the invoking user's processes of that name, unless --any-user. */
class FollowFilterTest {
    private static final Optional<ProcessUids> ALICE = Optional.of(new ProcessUids(1000, 1000));
    private static final Optional<ProcessUids> NOBODY = Optional.of(new ProcessUids(65534, 65534));
    private static final InvokingUser ALICE_VIA_SUDO = new InvokingUser(1000, true);

    @Test
    void followsTheInvokingUsersProcessOfThatName() {
        FollowFilter filter = new FollowFilter("llama-server", ALICE_VIA_SUDO, false);
        assertEquals(FOLLOW, filter.verdict("llama-server", ALICE));
        assertEquals(IGNORE, filter.verdict("llama-bench", ALICE));
        assertEquals(IGNORE, filter.verdict("llama-server", Optional.empty())); // gone while looked at
    }

    @Test
    void skipsAnotherUsersProcessOfThatName() {
        FollowFilter filter = new FollowFilter("llama-server", ALICE_VIA_SUDO, false);
        assertEquals(OTHER_USER, filter.verdict("llama-server", NOBODY));
        // Root's own process is another user's too when alice ran sudo.
        assertEquals(OTHER_USER, filter.verdict("llama-server", Optional.of(new ProcessUids(0, 0))));
        // Real uid alice, effective uid root (a set-uid program): not alice's to follow.
        assertEquals(OTHER_USER, filter.verdict("llama-server", Optional.of(new ProcessUids(1000, 0))));
    }

    @Test
    void anyUserFollowsEveryonesProcessOfThatName() {
        FollowFilter filter = new FollowFilter("llama-server", ALICE_VIA_SUDO, true);
        assertEquals(FOLLOW, filter.verdict("llama-server", NOBODY));
        assertEquals(FOLLOW, filter.verdict("llama-server", ALICE));
        assertEquals(IGNORE, filter.verdict("llama-bench", NOBODY));
    }

    @Test
    void aNameIsComparedAsTheKernelKeepsIt() {
        FollowFilter filter = new FollowFilter("llama-server-with-long-name", new InvokingUser(0, false), false);
        assertEquals(FOLLOW, filter.verdict("llama-server-wi", Optional.of(new ProcessUids(0, 0))));
    }

    @Test
    void theSkipIsSaidOnceInOneLine() {
        FollowFilter filter = new FollowFilter("llama-server", new InvokingUser(0, false), false);
        assertEquals(Optional.of("infertop: --follow llama-server: skipping pid 77, which runs as nobody (uid 65534): "
                        + "only processes of root (uid 0) are followed; add --any-user to follow any user's"),
                filter.skipNote(77, NOBODY.get()));
        assertEquals(Optional.empty(), filter.skipNote(78, NOBODY.get()));
    }
}
