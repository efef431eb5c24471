package dev.infertop.tui;

import dev.infertop.model.Layer;
import dev.infertop.view.HelpPanel;
import dev.infertop.view.MonitorScreen;
import dev.infertop.view.Theme;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the live view says about its keys, from the key table (config/keys.conf or the user's): each layer's
 * toggle key in the header, the help's entries and the footer's hints. Apart from the loop that handles keys,
 * because a user's key table changes all of it and none of the loop.
 */
final class KeyHelp {
    private KeyHelp() {}

    /** The screen drawn for these keys: each layer's toggle key, the help entries and the hint line. */
    static MonitorScreen screen(KeyTable keys, Theme theme) {
        List<String> layerKeys = new ArrayList<>();
        for (Layer layer : Layer.values()) {
            String key = null;
            for (Action action : Action.values()) {
                if (action.layer() == layer) {
                    key = keys.firstKey(action);
                }
            }
            layerKeys.add(key == null ? "" : key);
        }
        return new MonitorScreen(theme, layerKeys, helpEntries(keys), hints(keys));
    }

    /**
     * One entry per action, in the order the loop knows them; unbound actions say so. The layer toggles share
     * one line (keys "1 2 3 4 5 6", "layer on/off: token graph operator moe sched counters"), so the help still fits 80x24 as layers
     * are added.
     */
    public static List<HelpPanel.Entry> helpEntries(KeyTable keys) {
        Map<Action, List<String>> bound = keys.keysByAction();
        List<HelpPanel.Entry> entries = new ArrayList<>();
        List<String> toggleKeys = new ArrayList<>();
        List<String> toggled = new ArrayList<>();
        int toggleAt = -1;
        for (Action action : Action.values()) {
            if (action.layer() != null) {
                String key = keys.firstKey(action);
                if (key != null) {
                    toggleKeys.add(key);
                    toggled.add(action.layer().id());
                }
                toggleAt = toggleAt < 0 ? entries.size() : toggleAt;
                continue;
            }
            entries.add(new HelpPanel.Entry(bound.getOrDefault(action, List.of("(unbound)")), action.description()));
        }
        if (toggleAt >= 0) {
            // In key order (1 token, 2 graph, ... whatever order the layers were added to the code in).
            Integer[] order = new Integer[toggleKeys.size()];
            for (int i = 0; i < order.length; i++) {
                order[i] = i;
            }
            java.util.Arrays.sort(order, java.util.Comparator.comparing(toggleKeys::get));
            List<String> sortedKeys = new ArrayList<>();
            List<String> sortedLayers = new ArrayList<>();
            for (int i : order) {
                sortedKeys.add(toggleKeys.get(i));
                sortedLayers.add(toggled.get(i));
            }
            entries.add(toggleAt, new HelpPanel.Entry(sortedKeys.isEmpty() ? List.of("(unbound)") : sortedKeys,
                    TOGGLE_HELP + String.join(" ", sortedLayers)));
        }
        return entries;
    }

    /** Start of the help line of the layer toggles. */
    static final String TOGGLE_HELP = "layer on/off: ";

    static String hints(KeyTable keys) {
        StringBuilder text = new StringBuilder();
        hint(text, keys, "help", Action.HELP);
        hint(text, keys, "quit", Action.QUIT);
        hint(text, keys, "sort", Action.SORT_NEXT);
        hint(text, keys, "filter", Action.FILTER);
        hint(text, keys, "group", Action.GROUP_BY);
        hint(text, keys, "latency", Action.DETAILS);
        hint(text, keys, "freeze", Action.FREEZE);
        hint(text, keys, "ops on/off", Action.TOGGLE_OPERATOR);
        hint(text, keys, "threads", Action.THREAD_STATES);
        hint(text, keys, "faster", Action.FASTER);
        hint(text, keys, "slower", Action.SLOWER);
        return text.toString();
    }

    private static void hint(StringBuilder text, KeyTable keys, String label, Action action) {
        String key = keys.firstKey(action);
        if (key != null) {
            text.append(key).append(' ').append(label).append("  ");
        }
    }

}
