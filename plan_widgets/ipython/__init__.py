"""ipython"""
