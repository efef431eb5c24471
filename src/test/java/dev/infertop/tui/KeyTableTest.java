package dev.infertop.tui;

import com.googlecode.lanterna.input.KeyStroke;
import com.googlecode.lanterna.input.KeyType;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KeyTableTest {
    @Test
    void shippedTableBindsEveryActionAndSToSnapshots() {
        KeyTable keys = KeyTable.load();
        Map<Action, List<String>> bound = keys.keysByAction();
        assertEquals(EnumSet.allOf(Action.class), EnumSet.copyOf(bound.keySet()));
        assertEquals(Action.SNAPSHOT, keys.action("s"));
        assertEquals(Action.QUIT, keys.action(new KeyStroke('q', false, false)));
        assertEquals(Action.QUIT, keys.action(new KeyStroke(KeyType.F10)));
        assertEquals(Action.HELP, keys.action(new KeyStroke(KeyType.F1)));
        assertEquals(Action.HELP, keys.action(new KeyStroke('?', false, false)));
        assertEquals(Action.UP, keys.action(new KeyStroke(KeyType.ArrowUp)));
        assertEquals(Action.DOWN, keys.action(new KeyStroke('j', false, false)));
        assertEquals(Action.DETAILS, keys.action(new KeyStroke(KeyType.Enter)));
        assertEquals(Action.FREEZE, keys.action(new KeyStroke(' ', false, false)));
        assertEquals(Action.SORT_NEXT, keys.action(new KeyStroke(KeyType.F6)));
        assertEquals(Action.TOGGLE_OPERATOR, keys.action(new KeyStroke('3', false, false)));
        assertNull(keys.action(new KeyStroke('q', true, false)), "Ctrl-q is not q");
    }

    @Test
    void laterLinesRebindAndUnbind() {
        KeyTable keys = KeyTable.parse("q quit\nx quit\nq none\no toggle-operator\n");
        assertNull(keys.action("q"));
        assertEquals(Action.QUIT, keys.action("x"));
        assertEquals(Action.TOGGLE_OPERATOR, keys.action("o"));
        assertEquals("x", keys.firstKey(Action.QUIT));
    }

    @Test
    void badLinesSayWhereAndWhy() {
        IllegalArgumentException action = assertThrows(IllegalArgumentException.class,
                () -> KeyTable.parse("q quit\nz explode\n"));
        assertEquals("text:2: unknown action 'explode'", action.getMessage());
        IllegalArgumentException key = assertThrows(IllegalArgumentException.class,
                () -> KeyTable.parse("Ctrl-q quit\n"));
        assertTrue(key.getMessage().startsWith("text:1: unknown key 'Ctrl-q'"), key.getMessage());
    }

    @Test
    void helpListsExactlyTheLoopsActionsWithTheirKeys() {
        KeyTable keys = KeyTable.load();
        var entries = LiveMonitor.helpEntries(keys);
        // The layer toggles share one line, at the place of the first toggle.
        List<Action> toggles = Arrays.stream(Action.values()).filter(a -> a.layer() != null).toList();
        assertEquals(Action.values().length - toggles.size() + 1, entries.size());
        int i = 0;
        boolean togglesListed = false;
        for (Action action : Action.values()) {
            if (action.layer() != null) {
                if (!togglesListed) {
                    assertEquals(LiveMonitor.TOGGLE_HELP + "token graph operator moe sched counters",
                            entries.get(i).description());
                    assertEquals(List.of("1", "2", "3", "4", "5", "6"), entries.get(i).keys());
                    togglesListed = true;
                    i++;
                }
                continue;
            }
            assertEquals(action.description(), entries.get(i).description());
            assertEquals(keys.keysByAction().get(action), entries.get(i).keys());
            i++;
        }
        assertEquals(List.of("q", "F10"), entries.getFirst().keys());
        assertTrue(Arrays.stream(Action.values()).allMatch(a -> !a.description().isBlank()));
    }
}
