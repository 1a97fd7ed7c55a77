"""The app's screens: course map, lesson, exercise, training lab, and dialogs."""
